// Checks veto's Claude Agent SDK module (argv[3]) outside the SDK: the
// module turned into JavaScript with the runtime's typescript (argv[2]),
// its hooks and canUseTool called as the SDK calls them, against hook
// programs of each kind and, with $VETO_HOOK, the real veto-hook in a
// sandbox ($SDK_CHECK_WS its workspace): what each reply of veto makes of a
// call, that every failure blocks with a reason that never quotes the
// call's input, and how long a call waits for veto. Prints one line per
// case, "ok NAME" or "FAIL NAME: why", a "latency" line, and exits 1 on a
// FAIL.
import { createRequire } from "node:module";
import { writeFileSync, readFileSync, chmodSync, mkdtempSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [runtime, modulePath] = process.argv.slice(2);
const require = createRequire(join(runtime, "package.json"));
const ts = require("typescript");
const dir = mkdtempSync(join(tmpdir(), "veto-sdk-check-"));
const built = join(dir, "veto.mjs");
writeFileSync(built, ts.transpileModule(readFileSync(modulePath, "utf8"), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
const mod = await import(pathToFileURL(built).href);

let failed = 0;
const check = (name, ok, why) => {
	console.log(ok ? `ok ${name}` : `FAIL ${name}: ${why}`);
	if (!ok) failed++;
};

// verdictOf: only the exact allow lets a call go on.
for (const [name, reply, want] of [
	["the allow", { exit: 0, stdout: '{"block":false}\n', stderr: "" }, "allow"],
	["the allow with more fields", { exit: 0, stdout: '{"block":false,"x":1}', stderr: "" }, "deny"],
	["the allow with exit 2", { exit: 2, stdout: '{"block":false}', stderr: "" }, "deny"],
	["the allow with exit 1", { exit: 1, stdout: '{"block":false}', stderr: "" }, "deny"],
	["nothing printed", { exit: 0, stdout: "", stderr: "" }, "deny"],
	["not JSON", { exit: 0, stdout: "allow", stderr: "" }, "deny"],
	["an array", { exit: 0, stdout: "[false]", stderr: "" }, "deny"],
	["block as a string", { exit: 0, stdout: '{"block":"false"}', stderr: "" }, "deny"],
	["a question", { exit: 0, stdout: '{"ask":true,"block":true,"reason":"q (rule r, reason c)"}', stderr: "" }, "ask"],
	["a question with exit 2", { exit: 2, stdout: '{"ask":true,"block":true,"reason":"x"}', stderr: "" }, "deny"],
	["ask without block", { exit: 0, stdout: '{"ask":true,"reason":"x"}', stderr: "" }, "deny"],
]) {
	const v = mod.verdictOf(reply);
	check("reply: " + name, v.kind === want, `got ${v.kind}, want ${want}`);
}

const prog = (name, body) => {
	const p = join(dir, name);
	writeFileSync(p, "#!/bin/sh\n" + body + "\n");
	chmodSync(p, 0o755);
	return p;
};
const seen = join(dir, "seen.jsonl"); // what the logging hooks were sent
const canary = "SDK-MODULE-CANARY-" + process.pid;
const ws = process.env.SDK_CHECK_WS || dir;
const pre = (tool, input, id = "toolu_check_1") => ({ session_id: "check", transcript_path: "", cwd: ws, hook_event_name: "PreToolUse", tool_name: tool, tool_input: input, tool_use_id: id });
const signal = () => new AbortController().signal;
const decision = (out) => out?.hookSpecificOutput?.permissionDecision ?? (out && Object.keys(out).length === 0 ? "go on" : JSON.stringify(out));
const reasonOf = (out) => String(out?.hookSpecificOutput?.permissionDecisionReason ?? "");
const firstPre = (o) => o.hooks.PreToolUse[0].hooks[0];

const allow = prog("allow", `cat >> ${seen}; echo >> ${seen}; echo '{"block":false}'`);
const cases = [
	["the allow", allow, "go on", ""],
	["veto's denial", prog("deny", `cat >/dev/null; echo '{"block":true,"reason":"veto blocked this Write call (rule file.credential, reason credential_path): ask the user."}'; exit 2`), "deny", "rule file.credential"],
	["a hook that is missing", join(dir, "no-such-hook"), "deny", "could not be started: ENOENT"],
	["a hook that hangs", prog("hang", "exec sleep 30"), "deny", "did not answer within 700 ms"],
	["a hook killed", prog("crash", "kill -9 $$"), "deny", "was killed"],
	["a hook that prints garbage", prog("garbage", "cat >/dev/null; echo 'not json'; echo 'veto-hook: boom' >&2; exit 1"), "deny", "veto gave no answer the module can read (exit 1: veto-hook: boom)"],
	["a usage error", prog("usage", "cat >/dev/null; echo 'veto-hook: want a client' >&2; exit 64"), "deny", "exit 64: veto-hook: want a client"],
	["a question, no canUseTool", prog("ask", `cat >/dev/null; echo '{"ask":true,"block":true,"reason":"veto asks a person about this Write call (rule r1, reason c1): why."}'`), "deny", "no canUseTool to ask a person"],
];
for (const [name, hook, want, says] of cases) {
	const o = mod.withVeto({}, { hook: [hook, "claude-agent-sdk"], timeoutMs: 700 });
	const t0 = Date.now();
	const out = await firstPre(o)(pre("Write", { file_path: canary, content: canary }), "toolu_check_1", { signal: signal() });
	const took = Date.now() - t0;
	check("call: " + name, decision(out) === want && reasonOf(out).includes(says) && !JSON.stringify(out).includes(canary) && took < 2000,
		`${decision(out)} in ${took} ms: ${JSON.stringify(out)}`);
}
const sent = JSON.parse(readFileSync(seen, "utf8").trim().split("\n")[0]);
check("the event: the hook input, the protocol, no canUseTool", sent.veto_protocol === 1 && sent.veto_can_ask === false && sent.tool_use_id === "toolu_check_1" && sent.hook_event_name === "PreToolUse", JSON.stringify(sent));

// An abort from the SDK (the session ends) blocks.
{
	const o = mod.withVeto({}, { hook: [join(dir, "hang"), "claude-agent-sdk"], timeoutMs: 5000 });
	const ac = new AbortController();
	setTimeout(() => ac.abort(), 100);
	const out = await firstPre(o)(pre("Write", { file_path: canary }), "x", { signal: ac.signal });
	check("call: cancelled by the SDK", decision(out) === "deny" && reasonOf(out).includes("cancelled"), JSON.stringify(out));
}

// The options: veto's hooks first, the host's kept; PreToolUse blocks on failure.
{
	const mine = async () => ({});
	const o = mod.withVeto({ model: "m", hooks: { PreToolUse: [{ matcher: "Bash", hooks: [mine] }], Stop: [{ hooks: [mine] }] } }, { hook: [allow, "claude-agent-sdk"] });
	check("options: the host's hooks kept after veto's", o.model === "m" && o.hooks.PreToolUse.length === 2 && o.hooks.PreToolUse[1].hooks[0] === mine && o.hooks.Stop[0].hooks[0] === mine, JSON.stringify(Object.keys(o.hooks)));
	check("options: PreToolUse blocks when the callback fails", o.hooks.PreToolUse[0].onFailure === "block" && !o.hooks.PreToolUse[0].matcher, JSON.stringify(o.hooks.PreToolUse[0]));
	check("options: every event", ["PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart"].every((e) => o.hooks[e]?.[0]?.hooks?.length === 1), Object.keys(o.hooks).join(","));
	check("options: no canUseTool when the host gave none", o.canUseTool === undefined, "a canUseTool was added");
}

// An observation carries the call, never the tool's output.
{
	writeFileSync(seen, "");
	const o = mod.withVeto({}, { hook: [allow, "claude-agent-sdk"] });
	await o.hooks.PostToolUse[0].hooks[0]({ ...pre("Read", { file_path: "README.md" }), hook_event_name: "PostToolUse", tool_response: { content: canary } }, "x", { signal: signal() });
	const text = readFileSync(seen, "utf8");
	const ev = JSON.parse(text.trim());
	check("observe: the call without its output", ev.hook_event_name === "PostToolUse" && ev.tool_input.file_path === "README.md" && !("tool_response" in ev) && !text.includes(canary), text);
}

// Observations never throw, whatever veto does.
for (const [name, hook] of [["missing", join(dir, "no-such-hook")], ["garbage", join(dir, "garbage")]]) {
	const o = mod.withVeto({}, { hook: [hook, "claude-agent-sdk"], timeoutMs: 700 });
	let ok = true;
	for (const ev of ["PostToolUse", "PostToolUseFailure", "SessionStart"]) {
		try {
			const out = await o.hooks[ev][0].hooks[0]({ ...pre("Read", {}), hook_event_name: ev }, "x", { signal: signal() });
			ok = ok && JSON.stringify(out) === "{}";
		} catch {
			ok = false;
		}
	}
	check("observe: a hook " + name + " is no error", ok, "an observation threw or answered");
}

// canUseTool: veto's question goes to the host's, with veto's reason;
// yes runs the call as asked, anything else refuses it and tells veto.
const askLog = prog("ask-log", `cat >> ${seen}; echo >> ${seen}; echo '{"ask":true,"block":true,"reason":"veto asks a person about this Write call (rule r1, reason c1): why."}'`);
for (const [name, answer, want] of [
	["yes", async (t, i) => ({ behavior: "allow", updatedInput: { ...i, file_path: "/elsewhere" } }), "allow"],
	["no", async () => ({ behavior: "deny", message: "no" }), "deny"],
	["a prompt that throws", async () => { throw new Error(canary); }, "deny"],
	["a prompt that answers null", async () => null, "deny"],
]) {
	let shown = "";
	const host = async (t, i, opts) => {
		shown = opts.decisionReason;
		return answer(t, i, opts);
	};
	writeFileSync(seen, "");
	const o = mod.withVeto({ canUseTool: host }, { hook: [askLog, "claude-agent-sdk"] });
	const input = { file_path: join(ws, "RELEASE.txt"), content: canary };
	const out = await firstPre(o)(pre("Write", input, "toolu_q"), "toolu_q", { signal: signal() });
	const r = await o.canUseTool("Write", input, { signal: signal(), toolUseID: "toolu_q" });
	const events = readFileSync(seen, "utf8").trim().split("\n").map((l) => JSON.parse(l));
	const ok =
		decision(out) === "ask" &&
		events[0].veto_can_ask === true &&
		shown.includes("rule r1, reason c1") &&
		r.behavior === want &&
		(want === "allow"
			? r.updatedInput === input && events.length === 1
			: r.message.includes("The person refused this Write call at the host's prompt (veto asked: rule r1, reason c1)") &&
				!r.message.includes(canary) &&
				events.length === 2 && events[1].hook_event_name === "PermissionDenied" && events[1].veto_answer === "refused" && events[1].tool_use_id === "toolu_q");
	check("question: " + name, ok, `${decision(out)} ${JSON.stringify(r)} ${events.length} events`);
}
{
	let called = 0;
	const o = mod.withVeto({ canUseTool: async (t, i) => (called++, { behavior: "allow", updatedInput: i }) }, { hook: [allow, "claude-agent-sdk"] });
	const r = await o.canUseTool("Bash", { command: "ls" }, { signal: signal(), toolUseID: "other" });
	check("question: the host's own prompt, not veto's, is the host's", r.behavior === "allow" && called === 1, JSON.stringify(r));
}

// veto serve: a token file others may read, or none, blocks.
{
	const tok = join(dir, "token");
	writeFileSync(tok, "vt_x\n");
	chmodSync(tok, 0o644);
	for (const [name, cfg, says] of [
		["a token file others may read", { url: "http://127.0.0.1:9", tokenFile: tok }, "not a regular file only its owner may read"],
		["no token file", { url: "http://127.0.0.1:9" }, "no token file for veto serve"],
	]) {
		const out = await firstPre(mod.withVeto({}, cfg))(pre("Write", { file_path: canary }), "x", { signal: signal() });
		check("serve: " + name, decision(out) === "deny" && reasonOf(out).includes(says), JSON.stringify(out));
	}
	chmodSync(tok, 0o600);
	const out = await firstPre(mod.withVeto({}, { url: "http://127.0.0.1:9", tokenFile: tok, timeoutMs: 2000 }))(pre("Write", { file_path: canary }), "x", { signal: signal() });
	check("serve: nothing listening", decision(out) === "deny" && reasonOf(out).includes("veto serve at 127.0.0.1:9 cannot be reached"), JSON.stringify(out));
}

// The real veto-hook: a read allowed, a credential refused, and how long
// an allowed call waits (warm).
if (process.env.VETO_HOOK) {
	const o = mod.withVeto({}, { timeoutMs: 5000 });
	const readme = join(ws, "README.md");
	const deny = await firstPre(o)(pre("Read", { file_path: join(process.env.HOME, ".ssh", "id_rsa") }, "toolu_real_key"), "x", { signal: signal() });
	check("veto-hook: a credential read refused", decision(deny) === "deny" && reasonOf(deny).includes("file.credential"), JSON.stringify(deny));
	const n = 40;
	const ms = [];
	let allowed = 0;
	for (let i = 0; i < n + 1; i++) {
		const t0 = process.hrtime.bigint();
		const out = await firstPre(o)(pre("Read", { file_path: readme }, `toolu_real_${i}`), "x", { signal: signal() });
		const took = Number(process.hrtime.bigint() - t0) / 1e6;
		if (i === 0) continue; // the first starts the hook server
		if (decision(out) === "go on") allowed++;
		ms.push(took);
	}
	check("veto-hook: reads allowed", allowed === n, `${allowed} of ${n}`);
	ms.sort((a, b) => a - b);
	console.log(`latency: module → veto-hook → serve-hooks, a Read allowed: median ${ms[n >> 1].toFixed(1)} ms, p90 ${ms[Math.floor(n * 0.9)].toFixed(1)} ms, max ${ms[n - 1].toFixed(1)} ms (${n} calls, warm)`);
}
process.exit(failed ? 1 : 0);
