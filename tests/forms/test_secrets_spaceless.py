"""The secret guard in scripts written without spaces: Chinese, Japanese, Korean, Thai.

The secret words of those scripts are found inside running text, with the same rules as
elsewhere (a word right after, or in Thai right before, may say the field is about the
secret), and ordinary text holding the same characters in another word is left alone.
"""

from __future__ import annotations

import unicodedata

import pytest

from mcp_elicit.errors import SensitiveFieldError
from mcp_elicit.forms import Form, String
from mcp_elicit.forms.secrets import secret_in_field, words
from tests.support.deadline import within


@pytest.mark.parametrize(
    ("text", "split"),
    [
        ("APIキー", ("api", "キー")),
        ("请输入CVV", ("请输入", "cvv")),
        ("비밀번호를 입력하세요", ("비밀번호를", "입력하세요")),
        ("密码", ("密码",)),
    ],
)
def test_words_split_where_a_script_without_spaces_meets_latin(text: str, split: tuple[str, ...]) -> None:
    assert words(text) == split


# (text, the phrase the guard reports): as a field name, a title and a description.
SECRETS: list[tuple[str, str]] = [
    # Chinese, simplified.
    ("密码", "密码"),
    ("请输入您的密码", "密码"),
    ("新密码", "密码"),
    ("确认密码", "密码"),
    ("银行卡密码", "密码"),
    ("密码提示", "密码"),  # a hint is part of setting a password, as `password_hint`
    ("请输入密码，长度至少8位", "密码"),  # "length" is in another clause
    ("API密钥", "密钥"),
    ("请粘贴您的 API 密钥", "密钥"),
    ("私钥", "私钥"),
    ("访问令牌", "访问令牌"),
    ("信用卡号", "信用卡"),
    ("请输入CVV", "cvv"),
    # Chinese, traditional.
    ("請輸入您的密碼", "密碼"),
    ("API金鑰", "金鑰"),
    ("存取權杖", "存取權杖"),
    ("信用卡號碼", "信用卡"),
    # Japanese: katakana and kanji.
    ("パスワード", "パスワード"),
    ("パスワードを入力してください", "パスワード"),
    ("APIキー", "api キー"),
    ("API キーを貼り付けてください", "api キー"),
    ("パスワードのヒント", "パスワード"),  # a hint, as `password_hint`
    ("アクセストークン", "アクセストークン"),
    ("秘密鍵", "秘密鍵"),
    ("暗証番号を入力", "暗証番号"),
    ("クレジットカード番号", "クレジットカード"),
    ("セキュリティコード", "セキュリティコード"),
    # Korean, with particles attached.
    ("비밀번호", "비밀번호"),
    ("비밀번호를 입력하세요", "비밀번호"),
    ("새 비밀번호가 필요합니다", "비밀번호"),
    ("암호를 입력하세요", "암호"),
    ("비밀번호 힌트", "비밀번호"),  # a hint, as `password_hint`
    ("API 키를 입력하세요", "api 키"),
    ("카드번호", "카드 번호"),
    ("카드 번호를 입력하세요", "카드 번호"),
    # Thai.
    ("รหัสผ่าน", "รหัสผ่าน"),
    ("กรุณาใส่รหัสผ่านของคุณ", "รหัสผ่าน"),
    ("คีย์ API ของคุณ", "คีย์ api"),
    ("หมายเลขบัตรเครดิต", "บัตรเครดิต"),
]


@pytest.mark.parametrize(("text", "phrase"), SECRETS)
def test_secret_words_are_found_inside_running_text(text: str, phrase: str) -> None:
    findings = [
        secret_in_field(String(name=text)),
        secret_in_field(String(name="value", title=text)),
        secret_in_field(String(name="value", description=text)),
    ]
    assert [(f.where, f.phrase) if f else None for f in findings] == [
        ("name", phrase),
        ("title", phrase),
        ("description", phrase),
    ]


# Ordinary text: the same characters in another word, or a field about the secret.
NOT_SECRETS = [
    # Chinese, simplified: other words holding 密码, 口令, 令牌.
    "密码学是一门有趣的学科",  # cryptography is an interesting subject
    "这个基因的密码子是什么？",  # what is this gene's codon?
    "货物需要整齐紧密码放",  # goods must be stacked neatly and tightly (紧密 + 码放)
    "密码锁的颜色",  # the colour of the combination lock
    "选择密码算法",  # choose a cipher algorithm
    "出口令人担忧吗？",  # are the exports worrying? (出口 + 令人)
    "令牌桶容量",  # token bucket capacity (rate limiting)
    "你的秘密是什么？",  # what is your secret?
    "验证码发送到哪个手机？",  # which phone gets the verification code?
    "邮政编码",  # postal code
    "请输入您的邮箱地址",  # your email address
    # Chinese: about the password.
    "密码长度",  # password length
    "密码的最小长度",  # minimum length of the password
    "密码策略名称",  # password policy name
    "密码管理器",  # password manager
    "密码强度",  # password strength
    "信用卡类型",  # credit card type
    # Chinese, traditional.
    "成功的黃金鑰匙",  # the golden key to success (黃金 + 鑰匙)
    "密碼學課程",  # a cryptography course
    "密碼長度",  # password length
    # Japanese.
    "パスワードの長さ",  # length of the password
    "パスワードポリシー",  # password policy
    "パスワードマネージャーの名前",  # name of the password manager
    "キーボードの配列",  # keyboard layout
    "キーワードを入力してください",  # enter a keyword
    "トークン数の上限",  # token count limit
    "秘密の質問は何ですか",  # what is the secret question? (秘密 alone is not a secret word)
    "暗号資産の名前",  # name of a crypto asset
    "アクセスキーID",  # access key ID (an identifier, as `aws_access_key_id`)
    # Korean.
    "비밀번호 길이",  # password length
    "비밀번호의 최소 길이",  # minimum length of the password
    "비밀번호 정책",  # password policy
    "암호화 방식을 선택하세요",  # choose an encryption method
    "암호화폐 지갑 주소",  # crypto wallet address
    "암호학 수업",  # cryptography class
    "사용할 암호 알고리즘",  # the cipher algorithm to use (암호 is also "cipher")
    "암호 방식을 고르세요",  # choose an encryption method
    "암호 해독 결과",  # the result of deciphering
    "암호 화폐 지갑 주소",  # crypto wallet address, with the space it is often written with
    "암호랑이 사진",  # a photo of a tigress (암 + 호랑이)
    "키가 몇 cm 입니까?",  # how tall are you? (키 is also height)
    "카드 번호 마지막 4자리",  # last 4 digits of the card number
    # Thai.
    "ความยาวรหัสผ่าน",  # password length
    "นโยบายรหัสผ่าน",  # password policy
    "ความยาวของรหัสผ่าน",  # length of the password
    "วันหมดอายุบัตรเครดิต",  # credit card expiry date (as 信用卡有效期, 신용카드 만료)
    "วันหมดอายุของบัตรเครดิต",  # expiry date of the credit card
    "รูปแบบรหัสผ่าน",  # password format (as 密码格式)
    "เลขท้ายของบัตรเครดิต",  # last digits of the credit card (as 尾号, 끝자리)
    "รหัสไปรษณีย์",  # postal code
    "คีย์บอร์ด",  # keyboard
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_ordinary_text_is_not_flagged(text: str) -> None:
    assert secret_in_field(String(name="value", title=text, description=text)) is None, text
    assert secret_in_field(String(name=text)) is None, text


@pytest.mark.parametrize("text", ["请输入您的PIN码", "PINを入力してください", "PINコード", "PIN번호"])
def test_pin_in_prose_is_found_beside_letters_of_a_script_without_spaces(text: str) -> None:
    # "PIN码" and "PINコード" are the PIN itself; only the English "PIN code" is India's
    # postal code.
    finding = secret_in_field(String(name="value", description=text))
    assert finding is not None and finding.phrase == "PIN"


@pytest.mark.parametrize("text", ["パスワード", "비밀번호를 입력하세요"])
def test_decomposed_text_is_read_as_composed(text: str) -> None:
    # As some keyboards send it: パ as ハ and a combining mark, Hangul as jamo.
    decomposed = unicodedata.normalize("NFD", text)
    assert decomposed != text
    assert secret_in_field(String(name="value", title=decomposed)) is not None


def test_form_refuses_a_chinese_password_field() -> None:
    with pytest.raises(SensitiveFieldError, match="its title asks for a password"):
        Form(value=String(title="请输入您的密码"))


def test_a_secret_word_followed_by_a_long_run_of_spaces_is_read_in_linear_time() -> None:
    # Space may come between a word and what follows it ("비밀번호 길이"): looking past a
    # long run of spaces must not try every way of splitting it (quadratic: minutes for
    # the 200,000 here, far past the hang guard).
    gap = " " * 200_000
    with within(60, "reading a description with a long run of spaces"):
        found = secret_in_field(String(name="value", description=f"비밀번호{gap}를"))
        not_found = secret_in_field(String(name="value", description=f"비밀번호{gap}길이"))
    assert found is not None and found.phrase == "비밀번호"
    assert not_found is None
