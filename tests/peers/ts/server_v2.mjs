// A server built with the official TypeScript SDK v2 (@modelcontextprotocol/server), for
// mcp-elicit's client interop tests (tests/client/test_interop_ts.py).
//
//   node server_v2.mjs               stdio (serveStdio: 2026-07-28, and 2025-11-25 openings)
//   node server_v2.mjs --http PORT   Streamable HTTP at http://127.0.0.1:PORT/mcp
//
// Over HTTP, 2026-07-28 requests go to createMcpHandler (strict: legacy: 'reject') and
// 2025-era requests, told apart with isLegacyRequest, to a sessionful
// NodeStreamableHTTPServerTransport per session: the SDK's documented way to serve both eras
// on one port. The 2025 arm needs sessions because a server-initiated elicitation/create is
// answered by a later POST, which must reach the same server instance.
//
// Tools, one factory for both eras (the factory is told which era it serves):
//   plan_trip        a form (integer with bounds, date, titled enum, boolean and enum with
//                    defaults); echoes the accepted content and the JS type of each value.
//                    2026-07-28: returns inputRequired(...); 2025-11-25: ctx.mcpReq.elicitInput.
//   pick_dish        two rounds: a cuisine, then a dish of that cuisine, the cuisine carried in
//                    requestState (HMAC-sealed by createRequestStateCodec). Written once with
//                    inputRequired; on a 2025-11-25 connection the SDK's legacy shim pushes the
//                    elicitation/create requests itself.
//   profile          a form of every field kind (tests/peers/ts/trip.mjs), echoed like plan_trip.
//   briefing         a prompt that asks the audience first (inputRequired on 2026-07-28,
//                    ctx.mcpReq.elicitInput on 2025-11-25), then writes the prompt for it.
//   memo://vault     a resource that asks a passphrase before it is read, the same two ways.
//   connect_calendar a URL-mode elicitation: inputRequired.elicitUrl on 2026-07-28,
//                    elicitInput({mode: 'url', elicitationId}) on 2025-11-25.
//
// Diagnostics go to stderr only; stdout is the protocol on stdio.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';

import {
    localhostHostValidation,
    localhostOriginValidation,
    NodeStreamableHTTPServerTransport,
    toNodeHandler,
    toWebRequest
} from '@modelcontextprotocol/node';
import {
    acceptedContent,
    createMcpHandler,
    createRequestStateCodec,
    inputRequired,
    inputResponse,
    isInitializeRequest,
    isLegacyRequest,
    McpServer
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod/v4';

import { PROFILE_FORM, profileAnswer, text, TRIP_FORM, tripAnswer } from './trip.mjs';

const DISHES = {
    italian: ['risotto', 'lasagne'],
    japanese: ['ramen', 'tempura']
};

const CUISINE_FORM = {
    type: 'object',
    properties: { cuisine: { type: 'string', title: 'Cuisine', enum: Object.keys(DISHES) } },
    required: ['cuisine']
};

function dishForm(cuisine) {
    return {
        type: 'object',
        properties: { dish: { type: 'string', title: `A ${cuisine} dish`, enum: DISHES[cuisine] } },
        required: ['dish']
    };
}

// One key per process: every 2026-07-28 round is served by a fresh instance, so the sealed
// state is the only memory between rounds.
const stateCodec = createRequestStateCodec({ key: crypto.getRandomValues(new Uint8Array(32)), ttlSeconds: 600 });

function buildServer({ era }) {
    const server = new McpServer(
        { name: 'ts-v2-peer', version: '1.0.0' },
        { capabilities: { tools: {} }, requestState: { verify: stateCodec.verify } }
    );

    server.registerTool(
        'plan_trip',
        { description: 'Plan a trip; asks how many travel, when, and in which cabin.', inputSchema: z.object({}) },
        async (_args, ctx) => {
            const message = 'Who travels, and when?';
            if (era === 'legacy') {
                return tripAnswer(await ctx.mcpReq.elicitInput({ mode: 'form', message, requestedSchema: TRIP_FORM }));
            }
            const view = inputResponse(ctx.mcpReq.inputResponses, 'trip');
            if (view.kind === 'elicit') return tripAnswer(view);
            return inputRequired({ inputRequests: { trip: inputRequired.elicit({ message, requestedSchema: TRIP_FORM }) } });
        }
    );

    server.registerTool(
        'pick_dish',
        { description: 'Pick a dish: first a cuisine, then a dish of that cuisine.', inputSchema: z.object({}) },
        async (_args, ctx) => {
            const state = ctx.mcpReq.requestState();
            if (state === undefined) {
                const chosen = acceptedContent(ctx.mcpReq.inputResponses, 'cuisine', z.object({ cuisine: z.enum(Object.keys(DISHES)) }));
                if (chosen === undefined) {
                    if (inputResponse(ctx.mcpReq.inputResponses, 'cuisine').kind === 'elicit') return text('dish: no cuisine chosen');
                    return inputRequired({
                        inputRequests: { cuisine: inputRequired.elicit({ message: 'Which cuisine?', requestedSchema: CUISINE_FORM }) }
                    });
                }
                return inputRequired({
                    inputRequests: {
                        dish: inputRequired.elicit({ message: `Which ${chosen.cuisine} dish?`, requestedSchema: dishForm(chosen.cuisine) })
                    },
                    requestState: await stateCodec.mint({ cuisine: chosen.cuisine })
                });
            }
            const dish = acceptedContent(ctx.mcpReq.inputResponses, 'dish', z.object({ dish: z.enum(DISHES[state.cuisine]) }));
            return text(dish === undefined ? `dish: no ${state.cuisine} dish chosen` : `dish: ${dish.dish} (${state.cuisine})`);
        }
    );

    // Asks one form under `key`, the way the era wants; the answer (action and content), or
    // undefined when the 2026-07-28 round must first go out (`ask` is then returned).
    async function askOnce(ctx, key, message, requestedSchema) {
        if (era === 'legacy') return { answer: await ctx.mcpReq.elicitInput({ mode: 'form', message, requestedSchema }) };
        const view = inputResponse(ctx.mcpReq.inputResponses, key);
        if (view.kind === 'elicit') return { answer: view };
        return { ask: inputRequired({ inputRequests: { [key]: inputRequired.elicit({ message, requestedSchema }) } }) };
    }

    server.registerTool(
        'profile',
        { description: 'Fill in a profile: a form of every field kind.', inputSchema: z.object({}) },
        async (_args, ctx) => {
            const { answer, ask } = await askOnce(ctx, 'profile', 'Your profile', PROFILE_FORM);
            return ask ?? profileAnswer(answer);
        }
    );

    server.registerPrompt(
        'briefing',
        { description: 'A briefing written for an audience asked first.', argsSchema: z.object({ topic: z.string() }) },
        async ({ topic }, ctx) => {
            const form = { type: 'object', properties: { audience: { type: 'string', enum: ['team', 'board'] } }, required: ['audience'] };
            const { answer, ask } = await askOnce(ctx, 'audience', `Who reads the ${topic} briefing?`, form);
            if (ask) return ask;
            const who = answer.action === 'accept' ? answer.content.audience : `nobody (${answer.action})`;
            return { messages: [{ role: 'user', content: { type: 'text', text: `Brief ${who} on ${topic}.` } }] };
        }
    );

    server.registerResource('vault', 'memo://vault', { mimeType: 'text/plain' }, async (uri, ctx) => {
        const form = { type: 'object', properties: { passphrase: { type: 'string', minLength: 4 } }, required: ['passphrase'] };
        const { answer, ask } = await askOnce(ctx, 'passphrase', 'The vault passphrase', form);
        if (ask) return ask;
        const opened = answer.action === 'accept' && answer.content.passphrase === 'open sesame';
        return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: opened ? 'the memo: buy milk' : `vault shut (${answer.action})` }] };
    });

    server.registerTool(
        'connect_calendar',
        { description: 'Connect your calendar on a web page (URL mode).', inputSchema: z.object({ provider: z.string() }) },
        async ({ provider }, ctx) => {
            const url = `https://calendar.example.com/consent/${encodeURIComponent(provider)}`;
            const message = `Grant ${provider} calendar access`;
            let action;
            if (era === 'legacy') {
                ({ action } = await ctx.mcpReq.elicitInput({ mode: 'url', message, url, elicitationId: randomUUID() }));
            } else {
                const view = inputResponse(ctx.mcpReq.inputResponses, 'consent');
                if (view.kind !== 'elicit') {
                    return inputRequired({ inputRequests: { consent: inputRequired.elicitUrl({ message, url }) } });
                }
                action = view.action;
            }
            if (action === 'accept') return text(`calendar: ${provider} connected`);
            return text(`calendar: ${provider} not connected (${action})`);
        }
    );

    return server;
}

function serveHttp(port) {
    const modern = toNodeHandler(createMcpHandler(buildServer, { legacy: 'reject', onerror: report }));
    const sessions = new Map();

    async function legacy(req, res, body) {
        const sid = req.headers['mcp-session-id'];
        const transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
        if (transport !== undefined) {
            await transport.handleRequest(req, res, body);
        } else if (sid === undefined && isInitializeRequest(body)) {
            const fresh = new NodeStreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                onsessioninitialized: id => sessions.set(id, fresh)
            });
            fresh.onclose = () => fresh.sessionId && sessions.delete(fresh.sessionId);
            await buildServer({ era: 'legacy' }).connect(fresh);
            await fresh.handleRequest(req, res, body);
        } else {
            const [status, code, message] = sid ? [404, -32001, 'Session not found'] : [400, -32000, 'Bad Request: Session ID required'];
            res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
        }
    }

    const validHost = localhostHostValidation();
    const validOrigin = localhostOriginValidation();
    const server = createServer(async (req, res) => {
        if (!validHost(req, res) || !validOrigin(req, res)) return;
        if (new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/mcp') {
            res.writeHead(404).end();
            return;
        }
        try {
            if (req.method !== 'POST') {
                // GET (the event stream) and DELETE belong to 2025 sessions.
                await (req.headers['mcp-session-id'] ? legacy(req, res, undefined) : modern(req, res));
                return;
            }
            const chunks = [];
            for await (const chunk of req) chunks.push(chunk);
            let body;
            try {
                body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
                res.writeHead(400, { 'content-type': 'application/json' });
                res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
                return;
            }
            const probe = await toWebRequest(req, body);
            await ((await isLegacyRequest(probe)) ? legacy(req, res, body) : modern(req, res, body));
        } catch (error) {
            report(error);
            if (!res.headersSent) res.writeHead(500).end();
        }
    });
    server.listen(port, '127.0.0.1', () => console.error(`[ts-v2-peer] listening on http://127.0.0.1:${port}/mcp`));
}

function report(error) {
    console.error(`[ts-v2-peer] error: ${error?.stack ?? error}`);
}

const args = process.argv.slice(2);
if (args[0] === '--http') {
    serveHttp(Number(args[1]));
} else {
    serveStdio(buildServer, { onerror: report });
}
