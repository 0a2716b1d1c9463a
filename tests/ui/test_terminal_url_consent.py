"""The terminal answerer and URL-mode questions: a URL opens only after consent, a declined or
refused one is never opened, a name that only looks Latin is shown as DNS has it, and
without a browser the person opens it themselves."""

from __future__ import annotations

import asyncio
import threading

import pytest

from mcp_elicit.client import ElicitAnswer
from mcp_elicit.client.url_consent import judge_url
from mcp_elicit.ui.terminal import TerminalAnswerer

from support.terminal_answerer import (
    BACKSPACE,
    ENTER,
    ESC,
    Browser,
    answerer,
    elicit,
    elicit_typing,
    once_drawn,
    url_request,
)

pytestmark = pytest.mark.anyio


async def test_a_url_opens_only_after_consent_and_can_be_reopened() -> None:
    browser = Browser()
    url = "https://accounts.example.co.uk/signin?state=abc"
    async with answerer("o" + ENTER + "r" + ENTER + ENTER, browser=browser) as (ans, screen, _):
        request = url_request(url)
        answer = await elicit(ans, request)
        await asyncio.wait_for(ans.url_done(request), 1)
    assert answer == ElicitAnswer.accept()
    assert browser.opened == [url, url]
    text = screen.text
    assert "Table bookings 1.0.0 asks you to open a web page" in text
    assert url in text and "Site: example.co.uk" in text and "page on accounts.example.co.uk" in text
    assert "Nothing is opened or fetched unless you say so" in text


async def test_a_browser_command_that_waits_for_the_browser_to_close_holds_nothing_up() -> None:
    """``webbrowser`` runs a ``$BROWSER`` command it does not know and waits for it to
    exit, which may be when the person quits the browser: the person is asked whether
    they are done while it runs, and the answer goes out without waiting for it."""
    released = threading.Event()
    started: list[str] = []

    def browser_that_runs_until_closed(url: str) -> bool:
        started.append(url)
        released.wait(30)
        return True

    try:
        async with answerer(browser=browser_that_runs_until_closed) as (ans, screen, pipe):
            pipe.send_text("o" + ENTER)
            done = once_drawn(screen, "Enter: I am done on the page", pipe, ENTER)
            answer = await elicit_typing(ans, url_request("https://example.com/"), done)
    finally:
        released.set()
    assert answer == ElicitAnswer.accept()
    assert started == ["https://example.com/"]
    assert "Opened in your browser." in screen.text


@pytest.mark.parametrize("keys", ["d" + ENTER, "decline" + ENTER])
async def test_a_declined_url_is_never_opened(keys: str) -> None:
    browser = Browser()
    async with answerer(keys, browser=browser) as (ans, screen, _):
        answer = await elicit(ans, url_request("https://example.com/"))
    assert answer == ElicitAnswer.decline()
    assert browser.opened == []
    assert "Declined." in screen.text


async def test_enter_alone_is_not_consent() -> None:
    browser = Browser()
    async with answerer(ENTER + ENTER + "d" + ENTER, browser=browser) as (ans, _, _):
        answer = await elicit(ans, url_request("https://example.com/"))
    assert answer == ElicitAnswer.decline()
    assert browser.opened == []


async def test_esc_cancels_a_url_before_and_after_opening() -> None:
    browser = Browser()
    async with answerer(browser=browser) as (ans, screen, pipe):
        esc = once_drawn(screen, "o: open it in your browser", pipe, ESC)
        assert await elicit_typing(ans, url_request("https://example.com/"), esc) == ElicitAnswer.cancel()
        assert browser.opened == []
        pipe.send_text("o" + ENTER)
        esc = once_drawn(screen, "Enter: I am done on the page", pipe, ESC)
        assert await elicit_typing(ans, url_request("https://example.com/"), esc) == ElicitAnswer.cancel()
    assert browser.opened == ["https://example.com/"]
    assert screen.text.count("Cancelled.") == 2


async def refused(ans: TerminalAnswerer, url: str) -> ElicitAnswer:
    """What the client does with a URL it refuses: tells the answerer (``refused``)."""
    async with asyncio.timeout(10):
        return await ans.refused(url_request(url), judge_url(url))


async def test_a_url_with_a_user_name_is_refused_naming_where_it_really_goes() -> None:
    browser = Browser()
    async with answerer("o" + ENTER + BACKSPACE + ENTER, browser=browser) as (ans, screen, _):
        answer = await refused(ans, "https://bank.example.com@evil.example/login")
    assert answer == ElicitAnswer.decline()
    assert browser.opened == []
    text = " ".join(screen.text.replace("│", " ").split())  # the panel wraps the warning
    assert "https://bank.example.com@evil.example/login" in text
    assert "(bank.example.com), which is not the site: the address really goes to evil.example" in text
    assert "This address will not be opened." in text


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https://exa\u202emple.com",
        "https://evil.example\\@bank.com/",
    ],
)
async def test_a_refused_url_can_only_be_declined(url: str) -> None:
    browser = Browser()
    async with answerer("o" + ENTER + BACKSPACE + ENTER, browser=browser) as (ans, screen, _):
        answer = await refused(ans, url)
    assert answer == ElicitAnswer.decline()
    assert browser.opened == []
    assert "This address will not be opened." in screen.text


async def test_a_refused_url_can_be_cancelled() -> None:
    async with answerer() as (ans, screen, pipe), asyncio.TaskGroup() as group:
        group.create_task(once_drawn(screen, "Enter or d: decline", pipe, ESC))
        answer = group.create_task(refused(ans, "javascript:alert(1)"))
    assert answer.result() == ElicitAnswer.cancel()
    assert "Cancelled." in screen.text


async def test_without_a_browser_the_person_opens_it_themselves() -> None:
    browser = Browser(works=False)
    async with answerer("o" + ENTER + ENTER, browser=browser) as (ans, screen, _):
        answer = await elicit(ans, url_request("https://example.com/"))
    assert answer == ElicitAnswer.accept()
    assert "Could not start a browser here; open the address above yourself." in screen.text


@pytest.mark.parametrize("url", ["https://xn--80ak6aa92e.com/login", "https://аррӏе.com/login"])
async def test_a_name_of_letters_that_all_look_latin_is_shown_as_dns_has_it(url: str) -> None:
    # Every letter Cyrillic, each one the twin of a Latin one: read in Unicode it is
    # "apple.com"; the site a person is shown is the name as DNS has it.
    async with answerer("d" + ENTER) as (ans, screen, _):
        assert await elicit(ans, url_request(url)) == ElicitAnswer.decline()
    text = " ".join(screen.text.replace("│", " ").split())
    assert "Site: xn--80ak6aa92e.com" in text
    assert "Site: аррӏе.com" not in text
    assert "look like Latin ones: it reads as apple" in text
