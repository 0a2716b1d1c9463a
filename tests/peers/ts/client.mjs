// A client built with the official TypeScript SDK, for mcp-elicit's server interop tests.
//
//   node client.mjs PLAN.json
//
// PLAN (a JSON file) says which SDK and era, where the server is, what the client declares,
// how it answers, and what it does:
//
//   {"sdk": "v2" | "v1",            // @modelcontextprotocol/client 2.x or @modelcontextprotocol/sdk 1.x
//    "era": "auto" | "legacy",      // v2's version negotiation (v1 is always 2025-11-25)
//    "url": "http://127.0.0.1:PORT/mcp"  or  "command": ["mcp-elicit", "serve", "app.py"],
//    "elicitation": {"form": {}, "url": {}} | {} | null,   // null: no elicitation capability
//    "answers": [{"action": "accept", "content": {...}}, {"action": "decline"}, ...],
//    "listChanged": true,           // the SDK's listChanged option: refetch tools on a change
//    "steps": [{"op": "listTools"} | {"op": "callTool", "name": ..., "arguments": {...}, "timeoutMs": N?}
//              | {"op": "getPrompt", "name": ..., "arguments": {...}}
//              | {"op": "readResource", "uri": ...}
//              | {"op": "toolsChanged"}]}  // wait for the SDK's refetch after a change
//
// Each elicitation/create the SDK hands to the client's handler takes the next answer (see
// `answer` below). Prints one JSON object on stdout: the negotiated protocol version, each
// step's result or error, the params of every elicitation asked, the completion notices,
// what typing into pages gave, the questions withdrawn, and every message received and
// sent (so that the test can check what the server sent against the schema).
import { readFileSync } from 'node:fs';

const plan = JSON.parse(readFileSync(process.argv[2], 'utf8'));
// A stdio server gets the whole environment: the SDK passes only a few variables by
// default, so it would not see PYTHONPATH and could run another checkout's mcp_elicit.
const serverEnv = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined));
const received = [];
const sent = [];
const asked = [];
const notices = [];
const waiting = new Map();
const answers = [...(plan.answers ?? [])];

function record(message) {
    received.push(message);
    if (message.method === 'notifications/elicitation/complete') {
        const id = message.params?.elicitationId;
        notices.push(id);
        waiting.get(id)?.();
    }
}

// Wraps a transport so that every message is recorded: what the server sends, before the
// SDK sees it, and what the SDK sends.
function recorded(transport) {
    return new Proxy(transport, {
        set(target, key, value) {
            if (key === 'onmessage' && typeof value === 'function') {
                target.onmessage = (message, extra) => {
                    record(message);
                    return value(message, extra);
                };
                return true;
            }
            target[key] = value;
            return true;
        },
        get(target, key) {
            if (key === 'send') {
                return (message, options) => {
                    sent.push(message);
                    return target.send(message, options);
                };
            }
            const value = target[key];
            return typeof value === 'function' ? value.bind(target) : value;
        }
    });
}

// The person, in their browser, on one of mcp-elicit's secret pages: open the link (which
// sets the page's cookie and redirects), read the CSRF token, submit the value.
async function typeSecret(link, value) {
    const opened = await fetch(link, { redirect: 'manual' });
    if (opened.status !== 303) throw new Error(`the link answered ${opened.status}`);
    const cookie = opened.headers.getSetCookie().map(c => c.split(';')[0]).join('; ');
    const page = new URL(opened.headers.get('location'), link);
    const html = await (await fetch(page, { headers: { cookie } })).text();
    const csrf = /name="csrf" value="([0-9a-f]+)"/.exec(html)?.[1];
    if (!csrf) throw new Error(`no CSRF token on the page: ${html.slice(0, 300)}`);
    const done = await fetch(page, {
        method: 'POST',
        headers: { cookie, origin: page.origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf, action: 'submit', value })
    });
    const text = await done.text();
    if (done.status !== 200 || !text.includes('Saved')) throw new Error(`the page answered ${done.status}: ${text.slice(0, 300)}`);
}

// An answer is {"action": ..., "content": ...}, plus "delayMs" (how long the person takes
// before answering), "refuse" (the handler throws this message instead of answering), "hang"
// (nobody answers: the handler waits until the SDK aborts it, and the question's message is
// listed in "withdrawn"), and, for a URL step, "secret" (the value the person types into the
// page after agreeing to open it) and "awaitComplete" (answer only once the server said
// the step is complete: a 2025-11-25 client may do so).
const typing = [];
const withdrawn = [];
async function answer(request, extra) {
    const params = request.params ?? {};
    asked.push(params);
    const { secret, awaitComplete, delayMs, hang, refuse, ...result } = answers.shift() ?? { action: 'cancel' };
    if (delayMs) await new Promise(resolve => setTimeout(resolve, delayMs)); // a person taking their time
    if (refuse) throw new Error(refuse); // the client's handler fails: a JSON-RPC error goes back
    if (hang) {
        // nobody answers: wait for the SDK to say the server withdrew the question
        await new Promise(resolve => extra.signal.addEventListener('abort', resolve, { once: true }));
        withdrawn.push(params.message);
    }
    if (params.mode === 'url' && result.action === 'accept' && secret !== undefined) {
        const typed = typeSecret(params.url, secret);
        typing.push(typed.catch(error => ({ error: String(error) })));
        if (awaitComplete && params.elicitationId && !notices.includes(params.elicitationId)) {
            await typed;
            await new Promise((resolve, reject) => {
                waiting.set(params.elicitationId, resolve);
                setTimeout(() => reject(new Error(`no completion notice for ${params.elicitationId}`)), 10_000);
            });
        }
    }
    return result;
}

function describe(error) {
    return { code: error?.code, message: String(error?.message ?? error), data: error?.data ?? error?.elicitations };
}

// What the SDK's listChanged machinery refetched after each change (names of the tools).
const refetched = [];
let heardChange = null;
const listChanged = plan.listChanged
    ? {
          tools: {
              debounceMs: 0,
              onChanged: (error, tools) => {
                  refetched.push(error ? { error: String(error) } : (tools ?? []).map(t => t.name));
                  heardChange?.();
              }
          }
      }
    : undefined;
function toolsChanged() {
    if (refetched.length) return Promise.resolve(refetched.shift());
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no tools/list_changed within 10 s')), 10_000);
        heardChange = () => {
            clearTimeout(timer);
            heardChange = null;
            resolve(refetched.shift());
        };
    });
}

const capabilities = plan.elicitation === null || plan.elicitation === undefined ? {} : { elicitation: plan.elicitation };
const info = { name: `ts-sdk-${plan.sdk}`, version: '1.0.0' };
let client;
let transport;
if (plan.sdk === 'v1') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
    client = new Client(info, { capabilities, listChanged });
    if (plan.elicitation !== null && plan.elicitation !== undefined) {
        client.setRequestHandler(ElicitRequestSchema, answer);
    }
    transport = plan.url
        ? new StreamableHTTPClientTransport(new URL(plan.url))
        : new StdioClientTransport({ command: plan.command[0], args: plan.command.slice(1), env: serverEnv, stderr: 'inherit' });
} else {
    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
    client = new Client(info, { capabilities, listChanged, versionNegotiation: { mode: plan.era ?? 'auto' } });
    if (plan.elicitation !== null && plan.elicitation !== undefined) {
        client.setRequestHandler('elicitation/create', answer);
    }
    transport = plan.url
        ? new StreamableHTTPClientTransport(new URL(plan.url))
        : new StdioClientTransport({ command: plan.command[0], args: plan.command.slice(1), env: serverEnv, stderr: 'inherit' });
}

// What the SDK reported as errors besides a call's own (its transport's, say).
const errors = [];
client.onerror = error => errors.push(String(error?.message ?? error));
await client.connect(recorded(transport));
const results = [];
for (const step of plan.steps) {
    try {
        if (step.op === 'listTools') results.push({ result: await client.listTools() });
        else if (step.op === 'callTool') {
            // timeoutMs: the SDK's own request timeout (it then cancels the request)
            const options = step.timeoutMs ? { timeout: step.timeoutMs } : undefined;
            const params = { name: step.name, arguments: step.arguments ?? {} };
            const called = plan.sdk === 'v1' ? client.callTool(params, undefined, options) : client.callTool(params, options);
            results.push({ result: await called });
        }
        else if (step.op === 'getPrompt') results.push({ result: await client.getPrompt({ name: step.name, arguments: step.arguments ?? {} }) });
        else if (step.op === 'readResource') results.push({ result: await client.readResource({ uri: step.uri }) });
        else if (step.op === 'toolsChanged') results.push({ result: { tools: await toolsChanged() } });
        else throw new Error(`unknown step ${step.op}`);
    } catch (error) {
        results.push({ error: describe(error) });
    }
}
const handshake = received.find(m => typeof m.result?.protocolVersion === 'string');
const protocolVersion = client.getNegotiatedProtocolVersion?.() ?? handshake?.result.protocolVersion ?? null;
const pages = await Promise.all(typing);
await client.close();
process.stdout.write(JSON.stringify({ protocolVersion, results, asked, notices, pages, withdrawn, received, sent, errors }) + '\n');
process.exit(0);
