// veto's guard for OpenCode (npm opencode-ai): before each tool call
// runs, veto decides it (tool.execute.before); a refusal throws, so the
// call does not run and the model reads veto's reason (the rule and the
// reason code) as the tool's error; every result is recorded as an
// observation (tool.execute.after).
//
// OpenCode loads it from the project's .opencode/plugins/ (or, for every
// project, ~/.config/opencode/plugins/), where `veto init opencode` writes
// it, filling in INSTALLED below with the veto it was installed by.
//
// How it reaches veto, in order: $VETO_URL with $VETO_TOKEN_FILE (or the
// installed url and tokenFile): veto serve's command hook, POST
// URL/v1/hooks/opencode/command; else $VETO_HOOK, or the installed hook
// program: it is run with the event on stdin, as every client's hook is
// (veto-hook asks veto serve-hooks, starting it when none runs). The
// limit ($VETO_OPENCODE_TIMEOUT_MS, else the installed timeoutMs, 5000 ms
// by default) bounds every answer; veto-hook is given half of it.
//
// Fail closed: the call runs only when veto's reply is exactly the allow
// ({"block":false}, exit 0). A program that cannot start, an answer past
// the limit, a reply that does not parse, an error here: the call is
// refused, the reason naming the cause, never the call's arguments.
// A question (veto asks a person) is refused too: OpenCode gives a plugin
// no prompt of its own to put one to the person.
//
// OpenCode runs every function this module exports as a plugin: it
// exports the one.
//
// The protocol is package opencode's (the Go adapter): one JSON object
// an event, {"v": 1, "event": ..., "sessionId", "cwd", ...}.

import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";

// veto init opencode writes this line; it is the configuration of an
// installed copy (the hook program and its arguments, or veto serve's URL
// and the token's file). Empty: the environment says.
const INSTALLED: { hook?: string[]; url?: string; tokenFile?: string; timeoutMs?: number } = {}; // veto init opencode

const PROTOCOL = 1;
const DEFAULT_LIMIT_MS = 5000;
const MAX_REPLY = 1 << 20;

type Reply = { exit: number; stdout: string; stderr: string };
type Verdict = { kind: "allow" } | { kind: "deny"; reason: string };

// The parts of OpenCode's plugin API this guard uses (@opencode-ai/plugin's
// PluginInput and Hooks; declared here so the file loads without them).
type Input = { directory?: string; worktree?: string };
type ToolInput = { tool: string; sessionID: string; callID: string; args?: unknown };

export default async function veto(input: Input) {
	const cwd = typeof input?.directory === "string" && input.directory !== "" ? input.directory : process.cwd();

	const config = () => {
		const url = process.env.VETO_URL || INSTALLED.url || "";
		const tokenFile = process.env.VETO_TOKEN_FILE || INSTALLED.tokenFile || "";
		const hookEnv = process.env.VETO_HOOK || "";
		const hook = hookEnv ? [hookEnv, "opencode"] : INSTALLED.hook && INSTALLED.hook.length ? INSTALLED.hook : ["veto-hook", "opencode"];
		let limit = Number(process.env.VETO_OPENCODE_TIMEOUT_MS || INSTALLED.timeoutMs || DEFAULT_LIMIT_MS);
		if (!Number.isFinite(limit) || limit <= 0) limit = DEFAULT_LIMIT_MS;
		return { url, tokenFile, hook, limit };
	};

	// ask sends one event to veto and returns its reply; it throws a
	// cause (a sentence without the event's content) when there is none.
	const ask = async (event: Record<string, unknown>): Promise<Reply> => {
		const c = config();
		const body = JSON.stringify({ v: PROTOCOL, cwd, ...event });
		return c.url ? askServe(c.url, c.tokenFile, body, c.limit) : askHook(c.hook, body, c.limit, cwd);
	};

	return {
		event: async ({ event }: { event: any }) => {
			// Never throws: the start is noted; every call still asks.
			try {
				if (event?.type !== "session.created") return;
				const id = event?.properties?.info?.id;
				if (typeof id !== "string" || id === "") return;
				await ask({ event: "session_start", sessionId: id, reason: "created" });
			} catch {
				// tool_call decides, and fails closed, whatever happened here.
			}
		},

		"tool.execute.before": async (call: ToolInput, output: { args?: unknown }) => {
			let v: Verdict;
			try {
				const r = await ask({
					event: "tool_call",
					sessionId: sessionOf(call),
					toolName: String(call?.tool ?? ""),
					toolCallId: String(call?.callID ?? ""),
					input: output?.args ?? {},
				});
				v = verdictOf(r);
			} catch (err) {
				v = { kind: "deny", reason: `veto's OpenCode plugin could not get veto's answer (${causeOf(err)}), so the call is blocked.` };
			}
			if (v.kind !== "allow") throw new Error(v.reason);
		},

		"tool.execute.after": async (call: ToolInput, output: { metadata?: any }) => {
			try {
				const exit = output?.metadata?.exit;
				await ask({
					event: "tool_result",
					sessionId: sessionOf(call),
					toolName: String(call?.tool ?? ""),
					toolCallId: String(call?.callID ?? ""),
					input: call?.args ?? {},
					isError: typeof exit === "number" && exit !== 0,
				});
			} catch {
				// The call has run; nothing to block.
			}
		},
	};
}

function sessionOf(call: ToolInput): string {
	const id = call?.sessionID;
	if (typeof id !== "string" || id === "") throw new VetoError("OpenCode gave no session id");
	return id;
}

// verdictOf reads veto's reply: the allow only when exactly the allow.
function verdictOf(r: Reply): Verdict {
	let v: any;
	try {
		v = JSON.parse(r.stdout);
	} catch {
		v = undefined;
	}
	if (!v || typeof v !== "object" || Array.isArray(v)) {
		const why = r.stderr.trim().split("\n")[0]?.slice(0, 500) || "no reply";
		return { kind: "deny", reason: `veto gave no answer OpenCode's plugin can read (exit ${r.exit}: ${why}), so the call is blocked.` };
	}
	if (r.exit === 0 && v.block === false && Object.keys(v).length === 1) return { kind: "allow" };
	const reason = typeof v.reason === "string" && v.reason !== "" ? v.reason : `veto blocked this call (exit ${r.exit}, no reason given).`;
	return { kind: "deny", reason };
}

function causeOf(err: unknown): string {
	if (err instanceof VetoError) return err.message;
	const code = (err as any)?.code;
	return typeof code === "string" ? `an error in the plugin, ${code}` : "an error in the plugin";
}

// VetoError is a cause written here, safe to show: it never holds the event.
class VetoError extends Error {}

function askHook(hook: string[], body: string, limit: number, cwd: string): Promise<Reply> {
	return new Promise((resolve, reject) => {
		const budget = Math.max(100, Math.floor(limit / 2));
		let child: any;
		try {
			child = spawn(hook[0], [...hook.slice(1), "--timeout", `${budget}ms`], { cwd, stdio: ["pipe", "pipe", "pipe"] });
		} catch (err) {
			reject(new VetoError(`${hook[0]} could not be started: ${(err as any)?.code ?? "error"}`));
			return;
		}
		// Bytes, decoded once whole: a character split across chunks stays whole.
		const out: Buffer[] = [];
		const errOut: Buffer[] = [];
		let outLen = 0;
		let errLen = 0;
		let done = false;
		const finish = (f: () => void) => {
			if (done) return;
			done = true;
			clearTimeout(timer);
			f();
		};
		const timer = setTimeout(() => {
			try {
				child.kill("SIGKILL");
			} catch {
				// gone already
			}
			finish(() => reject(new VetoError(`veto did not answer within ${limit} ms`)));
		}, limit);
		child.on("error", (err: any) => finish(() => reject(new VetoError(`${hook[0]} could not be started: ${err?.code ?? "error"}`))));
		child.stdout.on("data", (b: Buffer) => {
			if (outLen < MAX_REPLY) out.push(b), (outLen += b.length);
		});
		child.stderr.on("data", (b: Buffer) => {
			if (errLen < MAX_REPLY) errOut.push(b), (errLen += b.length);
		});
		child.on("close", (code: number | null, signal: string | null) =>
			finish(() => {
				if (code === null) reject(new VetoError(`${hook[0]} was killed (${signal ?? "signal"})`));
				else resolve({ exit: code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(errOut).toString("utf8") });
			}),
		);
		child.stdin.on("error", () => {}); // a program that exits unread: its exit says why
		child.stdin.end(body);
	});
}

async function askServe(url: string, tokenFile: string, body: string, limit: number): Promise<Reply> {
	if (!tokenFile) throw new VetoError("no token file for veto serve ($VETO_TOKEN_FILE)");
	let st;
	try {
		st = statSync(tokenFile);
	} catch {
		throw new VetoError("the token file cannot be read");
	}
	if (!st.isFile() || (st.mode & 0o077) !== 0) throw new VetoError("the token file is not a regular file only its owner may read");
	const token = readFileSync(tokenFile, "utf8").trim();
	if (!token) throw new VetoError("the token file is empty");
	const base = url.replace(/\/+$/, "");
	let host = "veto serve";
	try {
		host = new URL(base).host;
	} catch {
		throw new VetoError("veto serve's URL does not parse");
	}
	let res: Response;
	try {
		res = await fetch(base + "/v1/hooks/opencode/command", {
			method: "POST",
			headers: { "content-type": "application/json", authorization: "Bearer " + token },
			body,
			signal: AbortSignal.timeout(limit),
		});
	} catch (err: any) {
		if (err?.name === "TimeoutError" || err?.name === "AbortError") throw new VetoError(`veto serve at ${host} did not answer within ${limit} ms`);
		throw new VetoError(`veto serve at ${host} cannot be reached`);
	}
	if (res.status !== 200) throw new VetoError(`veto serve at ${host} refused the event (HTTP ${res.status})`);
	let r: any;
	try {
		r = await res.json();
	} catch {
		throw new VetoError(`veto serve at ${host} gave an answer that is not a reply`);
	}
	if (typeof r?.exit !== "number" || typeof r?.stdout !== "string") throw new VetoError(`veto serve at ${host} gave an answer that is not a reply`);
	return { exit: r.exit, stdout: r.stdout, stderr: typeof r.stderr === "string" ? r.stderr : "" };
}
