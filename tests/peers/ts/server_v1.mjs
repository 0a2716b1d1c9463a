// A server built with the official TypeScript SDK v1 (@modelcontextprotocol/sdk McpServer,
// MCP 2025-11-25 only), for mcp-elicit's client interop tests (tests/client/test_interop_ts.py).
//
//   node server_v1.mjs               stdio
//   node server_v1.mjs --http PORT   Streamable HTTP at http://127.0.0.1:PORT/mcp, sessionful
//                                    (one StreamableHTTPServerTransport and McpServer per session)
//
// Tools:
//   plan_trip         a form through server.server.elicitInput (the v1 examples' idiom: not
//                     tied to the call, so over HTTP it goes out on the session's GET stream);
//                     echoes the accepted content and the JS type of each value, with distinct
//                     texts for decline and cancel.
//   profile           a form of every field kind (tests/peers/ts/trip.mjs), echoed like plan_trip.
//   connect_calendar  a URL-mode elicitInput with an elicitationId, tied to the call
//                     (relatedRequestId); 150 ms after asking, the "page" finishes and the server
//                     sends notifications/elicitation/complete (createElicitationCompletionNotifier,
//                     also tied to the call, as the SDK's docs advise), then, if the client
//                     accepted, the result. A client may hold its answer until the notice comes.
//   connect_bank      throws UrlElicitationRequiredError (-32042) until the account is linked;
//                     150 ms after the throw the "page" finishes, the account is linked and the
//                     completion notice goes out (on the GET stream over HTTP). The retry succeeds.
//
// Diagnostics go to stderr only; stdout is the protocol on stdio.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';

import { PROFILE_FORM, profileAnswer, text, TRIP_FORM, tripAnswer } from './trip.mjs';

const PAGE_DONE_MS = 150;

// Bank links by "session/account": done (true) or in progress on the page (its elicitationId).
const links = new Map();

function buildServer() {
    const server = new McpServer({ name: 'ts-v1-peer', version: '1.0.0' }, { capabilities: { tools: {} } });
    // Pages still open when the session ends (the client declined and left) say nothing.
    const pages = new Set();
    const later = (ms, action) => {
        const timer = setTimeout(() => {
            pages.delete(timer);
            action();
        }, ms);
        pages.add(timer);
        return timer;
    };
    server.server.onclose = () => pages.forEach(clearTimeout);

    server.registerTool(
        'plan_trip',
        { description: 'Plan a trip; asks how many travel, when, and in which cabin.', inputSchema: {} },
        async () => {
            return tripAnswer(
                await server.server.elicitInput({ mode: 'form', message: 'Who travels, and when?', requestedSchema: TRIP_FORM })
            );
        }
    );

    server.registerTool(
        'profile',
        { description: 'Fill in a profile: a form of every field kind.', inputSchema: {} },
        async () => profileAnswer(await server.server.elicitInput({ mode: 'form', message: 'Your profile', requestedSchema: PROFILE_FORM }))
    );

    server.registerTool(
        'connect_calendar',
        { description: 'Connect your calendar on a web page (URL mode).', inputSchema: { provider: z.string() } },
        async ({ provider }, extra) => {
            const elicitationId = randomUUID();
            const notify = server.server.createElicitationCompletionNotifier(elicitationId, { relatedRequestId: extra.requestId });
            // The person finishes on the page shortly after being asked; the server hears of it
            // (a callback, in real life) and says so to the client, while the call is open.
            let page;
            const finished = new Promise((resolve, reject) => {
                page = later(PAGE_DONE_MS, () => notify().then(resolve, reject));
            });
            const result = await server.server.elicitInput(
                {
                    mode: 'url',
                    message: `Grant ${provider} calendar access`,
                    url: `https://calendar.example.com/consent/${encodeURIComponent(provider)}?state=${elicitationId}`,
                    elicitationId
                },
                { relatedRequestId: extra.requestId, timeout: 30_000 }
            ).catch(error => {
                clearTimeout(page);
                throw error;
            });
            if (result.action !== 'accept') {
                clearTimeout(page);
                return text(`calendar: ${provider} not connected (${result.action})`);
            }
            await finished; // accept means the person agreed to go to the page: wait for it
            return text(`calendar: ${provider} connected (${elicitationId})`);
        }
    );

    server.registerTool(
        'connect_bank',
        { description: 'Read your balance; needs your bank account linked on a web page first.', inputSchema: { account: z.string() } },
        async ({ account }, extra) => {
            const key = `${extra.sessionId ?? 'stdio'}/${account}`;
            if (links.get(key) === true) return text(`bank: ${account} linked, balance 42`);
            let elicitationId = links.get(key);
            if (elicitationId === undefined) {
                elicitationId = randomUUID();
                links.set(key, elicitationId);
                const finished = server.server.createElicitationCompletionNotifier(elicitationId);
                later(PAGE_DONE_MS, () => {
                    links.set(key, true);
                    finished().catch(report);
                });
            }
            throw new UrlElicitationRequiredError(
                [
                    {
                        mode: 'url',
                        message: `Link your ${account} account at your bank`,
                        url: `https://bank.example.com/link?state=${elicitationId}`,
                        elicitationId
                    }
                ],
                'Link your bank account first'
            );
        }
    );

    return server;
}

function serveHttp(port) {
    const sessions = new Map();
    const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`]);

    async function handle(req, res) {
        if (!hosts.has(req.headers.host ?? '')) {
            res.writeHead(403).end('Invalid Host header');
            return;
        }
        if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/mcp') {
            res.writeHead(404).end();
            return;
        }
        let body;
        if (req.method === 'POST') {
            const chunks = [];
            for await (const chunk of req) chunks.push(chunk);
            try {
                body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
                return reply(res, 400, -32700, 'Parse error');
            }
        }
        const sid = req.headers['mcp-session-id'];
        const known = typeof sid === 'string' ? sessions.get(sid) : undefined;
        if (known !== undefined) {
            await known.handleRequest(req, res, body);
        } else if (sid === undefined && req.method === 'POST' && isInitializeRequest(body)) {
            const transport = new StreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                onsessioninitialized: id => sessions.set(id, transport)
            });
            transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
            await buildServer().connect(transport);
            await transport.handleRequest(req, res, body);
        } else if (sid !== undefined) {
            reply(res, 404, -32001, 'Session not found');
        } else {
            reply(res, 400, -32000, 'Bad Request: no valid session ID provided');
        }
    }

    createServer((req, res) => {
        handle(req, res).catch(error => {
            report(error);
            if (!res.headersSent) res.writeHead(500).end();
        });
    }).listen(port, '127.0.0.1', () => console.error(`[ts-v1-peer] listening on http://127.0.0.1:${port}/mcp`));
}

function reply(res, status, code, message) {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

function report(error) {
    console.error(`[ts-v1-peer] error: ${error?.stack ?? error}`);
}

const args = process.argv.slice(2);
if (args[0] === '--http') {
    serveHttp(Number(args[1]));
} else {
    await buildServer().connect(new StdioServerTransport());
}
