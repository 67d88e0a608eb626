// Checks veto's pi extension (argv[3]) outside pi, loaded with pi's own
// TypeScript loader (jiti, from the runtime at argv[2]), against a pi API
// of the test's: what each reply of veto makes of a call, and that every
// failure blocks with a reason that never quotes the call's input. Prints
// one line per case, "ok NAME" or "FAIL NAME: why", and exits 1 on a FAIL.
import { createRequire } from "node:module";
import { writeFileSync, chmodSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [runtime, extension] = process.argv.slice(2);
const require = createRequire(join(runtime, "package.json"));
const { createJiti } = require("jiti");
const mod = await createJiti(import.meta.url).import(extension);

let failed = 0;
const check = (name, ok, why) => {
	console.log(ok ? `ok ${name}` : `FAIL ${name}: ${why}`);
	if (!ok) failed++;
};

// verdictOf: only the exact allow lets a call run.
const cases = [
	["the allow", { exit: 0, stdout: '{"block":false}\n', stderr: "" }, "allow"],
	["the allow with more fields", { exit: 0, stdout: '{"block":false,"x":1}', stderr: "" }, "deny"],
	["the allow with exit 2", { exit: 2, stdout: '{"block":false}', stderr: "" }, "deny"],
	["the allow with exit 1", { exit: 1, stdout: '{"block":false}', stderr: "" }, "deny"],
	["nothing printed", { exit: 0, stdout: "", stderr: "" }, "deny"],
	["not JSON", { exit: 0, stdout: "allow", stderr: "" }, "deny"],
	["an array", { exit: 0, stdout: "[false]", stderr: "" }, "deny"],
	["block as a string", { exit: 0, stdout: '{"block":"false"}', stderr: "" }, "deny"],
	["veto's denial", { exit: 2, stdout: '{"block":true,"reason":"veto blocked this read call (rule file.credential, reason credential_path): …"}', stderr: "" }, "deny"],
	["a question", { exit: 0, stdout: '{"ask":true,"block":true,"reason":"veto asks a person about this write call (rule r, reason c): …"}', stderr: "" }, "ask"],
	["a question with exit 2", { exit: 2, stdout: '{"ask":true,"block":true,"reason":"x"}', stderr: "" }, "deny"],
	["ask without block", { exit: 0, stdout: '{"ask":true,"reason":"x"}', stderr: "" }, "deny"],
];
for (const [name, reply, want] of cases) {
	const v = mod.verdictOf(reply);
	check("reply: " + name, v.kind === want, `got ${v.kind}, want ${want}`);
}
const rc = mod.ruleOf("veto blocked this read call (rule file.credential, reason credential_path): x");
check("ruleOf", rc.rule === "file.credential" && rc.code === "credential_path", JSON.stringify(rc));

// The handlers, with a pi of the test's and a hook program of each kind.
const dir = mkdtempSync(join(tmpdir(), "veto-pi-ext-"));
const prog = (name, body) => {
	const p = join(dir, name);
	writeFileSync(p, "#!/bin/sh\n" + body + "\n");
	chmodSync(p, 0o755);
	return p;
};
const canary = "PI-EXT-CANARY-" + process.pid;
const run = async (hook, opts = {}) => {
	const handlers = {};
	const entries = [];
	const pi = {
		on: (ev, h) => (handlers[ev] = h),
		appendEntry: (type, data) => entries.push({ type, data }),
		registerFlag: () => {},
		getFlag: () => undefined,
	};
	process.env.VETO_HOOK = hook;
	process.env.VETO_PI_TIMEOUT_MS = "1000";
	mod.default(pi);
	const confirms = [];
	const ctx = {
		cwd: dir,
		hasUI: !!opts.ui,
		ui: { confirm: async (t, m) => (confirms.push(m), opts.answer ?? false), notify: () => {} },
		sessionManager: opts.session ?? { getSessionId: () => "s-1", getEntries: () => [] },
	};
	const event = { toolName: "read", toolCallId: "call-1", input: { path: "/home/x/.ssh/" + canary } };
	const result = await handlers.tool_call(event, ctx);
	return { result, entries, confirms };
};
const blocked = (name, r, says, by) => {
	const reason = r.result?.reason ?? "";
	check(name + ": blocked", r.result?.block === true, JSON.stringify(r.result));
	check(name + ": says why", reason.includes(says), reason);
	check(name + ": no input in the reason", !reason.includes(canary), reason);
	const e = r.entries[0];
	check(name + ": its refusal entry", r.entries.length === 1 && e.type === "veto-refusal" && e.data.toolCallId === "call-1" &&
		e.data.toolName === "read" && e.data.by === by && !JSON.stringify(e.data).includes(canary), JSON.stringify(r.entries));
};

let r = await run(prog("allow", 'cat >/dev/null; echo \'{"block":false}\''));
check("an allow: the call runs", r.result === undefined && r.entries.length === 0, JSON.stringify(r));
r = await run(prog("deny", 'cat >/dev/null; echo \'{"block":true,"reason":"veto blocked this read call (rule file.credential, reason credential_path): no."}\'; exit 2'));
blocked("a denial", r, "rule file.credential", "veto");
check("a denial: the entry names the rule", r.entries[0]?.data.rule === "file.credential" && r.entries[0]?.data.reason === "credential_path", JSON.stringify(r.entries));
blocked("a missing program", await run(join(dir, "no-such-hook")), "could not be started: ENOENT", "failure");
blocked("a hook that hangs", await run(prog("hang", "exec sleep 30")), "did not answer within 1000 ms", "failure");
blocked("a hook that crashes", await run(prog("crash", "cat >/dev/null; echo oops >&2; kill -9 $$")), "was killed", "failure");
blocked("a hook that prints garbage", await run(prog("garbage", "cat >/dev/null; echo '{'")), "no answer pi can read", "failure");
blocked("an error in the extension", await run(prog("allow2", 'cat >/dev/null; echo \'{"block":false}\''), {
	session: { getSessionId: () => { throw new TypeError("boom " + canary); }, getEntries: () => [] },
}), "an error in the extension", "failure");
const ask = prog("ask", 'cat >/dev/null; echo \'{"ask":true,"block":true,"reason":"veto asks a person about this read call (rule r1, reason c1): sure?"}\'');
r = await run(ask, { ui: true, answer: true });
check("a question answered yes: the call runs", r.result === undefined && r.confirms.length === 1 && r.confirms[0].includes("rule r1"), JSON.stringify(r));
r = await run(ask, { ui: true, answer: false });
blocked("a question answered no", r, "The person refused this read call", "person");
check("a question answered no: the entry names the rule asked", r.entries[0]?.data.rule === "r1" && r.entries[0]?.data.reason === "c1", JSON.stringify(r.entries));
r = await run(ask, { ui: false });
blocked("a question without a UI", r, "no UI", "veto");
check("a question without a UI: no dialog", r.confirms.length === 0, JSON.stringify(r.confirms));
process.exit(failed ? 1 : 0);
