// Checks veto's OpenCode plugin outside OpenCode, in OpenCode's own Bun
// (BUN_BE_BUN=1): bun opencode-plugin-check.ts PLUGIN WS BIN KEY.
// PLUGIN is integrations/opencode/veto.ts, WS the sandbox's workspace,
// BIN its bin directory (veto-hook and the stand-in hooks), KEY the
// sandbox's SSH key. Prints "ok NAME" for each check; exits 1 on the
// first that fails.

const [plugin, ws, bin, key] = process.argv.slice(2);
const CANARY = "VETO-OC-CHECK-CANARY-ARGUMENT";

let failed = 0;
function check(name: string, ok: boolean, detail = "") {
	if (ok) console.log("\nok " + name);
	else {
		failed++;
		console.log("\nFAIL " + name + (detail ? ": " + detail : ""));
	}
}

async function thrown(p: Promise<unknown>): Promise<string | null> {
	try {
		await p;
		return null;
	} catch (err: any) {
		return String(err?.message ?? err);
	}
}

const mod = await import(plugin);
check("the module exports only the plugin (OpenCode runs every export)", JSON.stringify(Object.keys(mod)) === '["default"]', Object.keys(mod).join(","));
const hooks: any = await mod.default({ directory: ws, worktree: ws });
check("the plugin returns its hooks", typeof hooks["tool.execute.before"] === "function" && typeof hooks["tool.execute.after"] === "function" && typeof hooks.event === "function");

const before = (tool: string, callID: string, args: unknown, sessionID = "chk-session") =>
	hooks["tool.execute.before"]({ tool, sessionID, callID }, { args });
const after = (tool: string, callID: string, args: unknown, metadata: unknown = {}) =>
	hooks["tool.execute.after"]({ tool, sessionID: "chk-session", callID, args }, { title: "", output: "", metadata });

// The real veto-hook.
process.env.VETO_HOOK = bin + "/veto-hook";
await hooks.event({ event: { type: "session.created", properties: { info: { id: "chk-session" } } } });
let m = await thrown(before("read", "chk-read", { filePath: ws + "/README.md" }));
check("veto allows a read of the README: the call goes on", m === null, m ?? "");
await after("read", "chk-read", { filePath: ws + "/README.md" });
// What a call waits for veto in OpenCode, warm: 40 allowed reads through
// veto-hook and the hook server it started.
const ms: number[] = [];
let allowed = 0;
for (let i = 0; i < 40; i++) {
	const t0 = performance.now();
	if ((await thrown(before("read", "chk-lat-" + i, { filePath: ws + "/README.md" }))) === null) allowed++;
	ms.push(performance.now() - t0);
}
ms.sort((a, b) => a - b);
console.log(`\nlatency: a read allowed through the plugin, veto-hook and serve-hooks: median ${ms[20].toFixed(1)} ms, p90 ${ms[36].toFixed(1)} ms, max ${ms[39].toFixed(1)} ms (40 calls, warm)`);
check("40 reads in a row are allowed", allowed === 40, String(allowed));
m = await thrown(before("read", "chk-key", { filePath: key }));
check("veto refuses a read of the SSH key: the hook throws veto's reason, with the rule", m !== null && m.includes("(rule file.credential, reason"), m ?? "it ran");
m = await thrown(before("write", "chk-canary", { filePath: ws + "/.veto/veto.yaml", content: CANARY }));
check("veto refuses a write of its own policy, and the reason quotes no argument", m !== null && !m.includes(CANARY) && m.includes("veto.control"), m ?? "it ran");

// Every failure throws, with the cause, never the input.
const failures: [string, string, string, Record<string, string>][] = [
	["a missing hook program", bin + "/no-such-veto-hook", "could not be started: ENOENT", {}],
	["a hook that prints what is not a reply", bin + "/garbled", "veto gave no answer OpenCode's plugin can read (exit 0", {}],
	["a hook that crashes", bin + "/crash", "(exit 3: boom)", {}],
	["a hook slower than the limit", bin + "/hang", "veto did not answer within 300 ms", { VETO_OPENCODE_TIMEOUT_MS: "300" }],
	["an allow with more than the allow", bin + "/allow-more", "veto blocked this call (exit 0, no reason given)", {}],
	["veto serve that is not there", bin + "/veto-hook", "veto serve at 127.0.0.1:9 cannot be reached", { VETO_URL: "http://127.0.0.1:9", VETO_TOKEN_FILE: bin + "/token" }],
	["veto serve without a token file", bin + "/veto-hook", "no token file for veto serve", { VETO_URL: "http://127.0.0.1:9" }],
];
await Bun.write(bin + "/token", "t0ken\n");
(await import("node:fs")).chmodSync(bin + "/token", 0o600);
for (const [name, hook, says, env] of failures) {
	process.env.VETO_HOOK = hook;
	for (const [k, v] of Object.entries(env)) process.env[k] = v;
	const t0 = Date.now();
	m = await thrown(before("write", "chk-fail", { filePath: ws + "/" + CANARY, content: CANARY }));
	const ms = Date.now() - t0;
	check(name + ` blocks the call (${ms} ms)`, m !== null && m.includes(says) && !m.includes(CANARY), m ?? "it ran");
	for (const k of Object.keys(env)) delete process.env[k];
}
m = await thrown(before("read", "chk-nosession", { filePath: ws + "/README.md" }, ""));
check("a call without a session id is blocked", m !== null && m.includes("OpenCode gave no session id"), m ?? "it ran");

// Neither the start nor a result ever throws, whatever veto does.
process.env.VETO_HOOK = bin + "/no-such-veto-hook";
m = await thrown(hooks.event({ event: { type: "session.created", properties: { info: { id: "chk-2" } } } }));
check("a start veto cannot record does not throw", m === null, m ?? "");
m = await thrown(after("bash", "chk-after", { command: "ls" }, { exit: 1 }));
check("a result veto cannot record does not throw", m === null, m ?? "");

process.exit(failed ? 1 : 0);
