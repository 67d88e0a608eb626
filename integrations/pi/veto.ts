// veto's guard for pi (npm @mariozechner/pi-coding-agent): before each
// tool call runs, veto decides it; every refusal blocks the call with
// veto's reason and leaves a "veto-refusal" entry in pi's session naming
// the call and the rule; every result is recorded as an observation.
//
// Load it with `pi -e integrations/pi/veto.ts`, or let `veto init pi` write
// it into .pi/extensions/ (or, with --user, ~/.pi/agent/extensions/), which
// fills in INSTALLED below with the veto it was installed by.
//
// How it reaches veto, in order: --veto-url (or $VETO_URL) with
// --veto-token-file (or $VETO_TOKEN_FILE): veto serve's command hook,
// POST URL/v1/hooks/pi/command; else --veto-hook (or $VETO_HOOK), or the
// installed veto-hook: the program is run with the event on stdin, as
// every client's hook is (it asks veto serve-hooks, starting it when
// none runs). The limit (--veto-timeout-ms, $VETO_PI_TIMEOUT_MS, 5000 ms
// by default) bounds every answer; veto-hook is given half of it.
//
// Fail closed: the call runs only when veto's reply is exactly the allow
// ({"block":false}, exit 0). A program that cannot start, an answer past
// the limit, a reply that does not parse, an error here: the call is
// blocked, the reason naming the cause, never the call's arguments.
// A question (veto asks a person) goes to pi's own confirm dialog where
// pi has a UI (interactive and RPC mode), and is refused where it has
// none (print and JSON mode).
//
// The protocol is package pi's (the Go adapter): one JSON object a
// call, {"v": 1, "event": ..., "sessionId", "cwd", ...}.

import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";

// veto init pi writes this line; it is the configuration of an installed
// copy (the hook program and its arguments, or veto serve's URL and the
// token's file). Empty: the flags and environment say.
const INSTALLED: { hook?: string[]; url?: string; tokenFile?: string; timeoutMs?: number } = {}; // veto init pi

const PROTOCOL = 1;
const ENTRY = "veto-refusal";
const DEFAULT_LIMIT_MS = 5000;
const MAX_REPLY = 1 << 20;

type Reply = { exit: number; stdout: string; stderr: string };
type Verdict =
	| { kind: "allow" }
	| { kind: "deny"; reason: string; failure?: boolean }
	| { kind: "ask"; reason: string };

// The parts of pi's API this guard uses (the types are pi's
// ExtensionAPI and ExtensionContext; declared here so the file loads
// without pi's type package).
type UI = { confirm(title: string, message: string, opts?: unknown): Promise<boolean>; notify(msg: string, kind?: string): void };
type Ctx = { cwd: string; hasUI: boolean; ui: UI; sessionManager: { getSessionId(): string; getEntries(): any[] } };
type API = {
	on(event: string, handler: (event: any, ctx: Ctx) => unknown): void;
	appendEntry(customType: string, data?: unknown): void;
	registerFlag(name: string, opts: { description: string; type: "string" | "boolean"; default?: unknown }): void;
	getFlag(name: string): unknown;
};

export default function veto(pi: API) {
	for (const [name, description] of [
		["veto-hook", "veto's hook program (default: the installed veto-hook, or veto-hook on PATH)"],
		["veto-url", "veto serve's base URL: ask it instead of veto-hook"],
		["veto-token-file", "the file (0600) holding the hook's agent token for --veto-url"],
		["veto-timeout-ms", "block a call veto has not answered in this many milliseconds (default 5000)"],
	]) {
		pi.registerFlag(name, { description, type: "string" });
	}

	const flag = (name: string): string => {
		try {
			const v = pi.getFlag(name);
			return typeof v === "string" ? v : "";
		} catch {
			return "";
		}
	};

	const config = () => {
		const url = flag("veto-url") || process.env.VETO_URL || INSTALLED.url || "";
		const tokenFile = flag("veto-token-file") || process.env.VETO_TOKEN_FILE || INSTALLED.tokenFile || "";
		const hookFlag = flag("veto-hook") || process.env.VETO_HOOK || "";
		const hook = hookFlag ? [hookFlag, "pi"] : INSTALLED.hook && INSTALLED.hook.length ? INSTALLED.hook : ["veto-hook", "pi"];
		let limit = Number(flag("veto-timeout-ms") || process.env.VETO_PI_TIMEOUT_MS || INSTALLED.timeoutMs || DEFAULT_LIMIT_MS);
		if (!Number.isFinite(limit) || limit <= 0) limit = DEFAULT_LIMIT_MS;
		return { url, tokenFile, hook, limit };
	};

	// ask sends one event to veto and returns its reply; it throws a
	// cause (a sentence without the event's content) when there is none.
	const ask = async (event: Record<string, unknown>, cwd: string): Promise<Reply> => {
		const c = config();
		const body = JSON.stringify({ v: PROTOCOL, ...event });
		return c.url ? askServe(c.url, c.tokenFile, body, c.limit) : askHook(c.hook, body, c.limit, cwd);
	};

	const decide = async (event: any, ctx: Ctx): Promise<Verdict> => {
		const r = await ask(
			{
				event: "tool_call",
				sessionId: sessionOf(ctx),
				cwd: ctx.cwd,
				toolName: event.toolName,
				toolCallId: event.toolCallId,
				input: event.input ?? {},
				hasUI: !!ctx.hasUI,
			},
			ctx.cwd,
		);
		return verdictOf(r);
	};

	const refuse = (event: any, reason: string, by: "veto" | "person" | "failure", asked?: { rule: string; code: string }) => {
		const { rule, code } = asked ?? ruleOf(reason);
		try {
			pi.appendEntry(ENTRY, { toolCallId: String(event?.toolCallId ?? ""), toolName: String(event?.toolName ?? ""), rule, reason: code, by });
		} catch {
			// The entry is the record's; the refusal stands without it.
		}
		return { block: true, reason };
	};

	pi.on("session_start", async (event: any, ctx: Ctx) => {
		// Never throws: a throwing session_start would wedge print mode. A
		// start veto could not record is noted; every call still asks.
		try {
			const resumed = (ctx.sessionManager.getEntries() ?? []).some((e: any) => e?.type === "message");
			await ask({ event: "session_start", sessionId: sessionOf(ctx), cwd: ctx.cwd, reason: String(event?.reason ?? ""), resumed }, ctx.cwd);
		} catch {
			// tool_call decides, and fails closed, whatever happened here.
		}
	});

	pi.on("tool_call", async (event: any, ctx: Ctx) => {
		try {
			const v = await decide(event, ctx);
			if (v.kind === "allow") return undefined;
			if (v.kind === "deny") return refuse(event, v.reason, v.failure ? "failure" : "veto");
			if (!ctx.hasUI) {
				return refuse(event, v.reason + " pi has no UI to ask a person here, so the call is refused.", "veto");
			}
			const yes = await ctx.ui.confirm("veto asks: allow this " + String(event.toolName) + " call?", v.reason);
			if (yes) return undefined; // the person's answer; tool_result records what the call did
			try {
				await ask(
					{
						event: "answer",
						answer: "refused",
						sessionId: sessionOf(ctx),
						cwd: ctx.cwd,
						toolName: event.toolName,
						toolCallId: event.toolCallId,
						input: event.input ?? {},
					},
					ctx.cwd,
				);
			} catch {
				// Not recorded; the call is refused all the same.
			}
			const { rule, code } = ruleOf(v.reason);
			return refuse(
				event,
				`The person refused this ${String(event.toolName)} call at pi's prompt (veto asked: rule ${rule}, reason ${code}). Do not retry it or work around it; ask the user how to proceed.`,
				"person",
				{ rule, code },
			);
		} catch (err) {
			return refuse(event, `veto's pi extension could not get veto's answer (${causeOf(err)}), so the call is blocked.`, "failure");
		}
	});

	pi.on("tool_result", async (event: any, ctx: Ctx) => {
		try {
			const r = await ask(
				{
					event: "tool_result",
					sessionId: sessionOf(ctx),
					cwd: ctx.cwd,
					toolName: event.toolName,
					toolCallId: event.toolCallId,
					input: event.input ?? {},
					isError: !!event.isError,
				},
				ctx.cwd,
			);
			if (r.exit !== 0 && ctx.hasUI) ctx.ui.notify("veto could not record what the " + String(event.toolName) + " call did.", "warning");
		} catch {
			// The call has run; nothing to block.
		}
		return undefined; // the result is the tool's, unchanged
	});
}

function sessionOf(ctx: Ctx): string {
	const id = ctx.sessionManager?.getSessionId?.();
	if (typeof id !== "string" || id === "") throw new Error("pi gave no session id");
	return id;
}

// verdictOf reads veto's reply: the allow only when exactly the allow.
export function verdictOf(r: Reply): Verdict {
	let v: any;
	try {
		v = JSON.parse(r.stdout);
	} catch {
		v = undefined;
	}
	if (!v || typeof v !== "object" || Array.isArray(v)) {
		const why = r.stderr.trim().split("\n")[0]?.slice(0, 500) || "no reply";
		return { kind: "deny", reason: `veto gave no answer pi can read (exit ${r.exit}: ${why}), so the call is blocked.`, failure: true };
	}
	if (r.exit === 0 && v.block === false && Object.keys(v).length === 1) return { kind: "allow" };
	const reason = typeof v.reason === "string" && v.reason !== "" ? v.reason : `veto blocked this call (exit ${r.exit}, no reason given).`;
	if (r.exit === 0 && v.block === true && v.ask === true) return { kind: "ask", reason };
	return { kind: "deny", reason };
}

// ruleOf finds the rule and the reason code in veto's reason ("… (rule R,
// reason C) …", or "(C)" for a refusal without a rule).
export function ruleOf(reason: string): { rule: string; code: string } {
	const m = /\(rule ([^,()\s]+), reason ([^()\s]+)\)/.exec(reason);
	if (m) return { rule: m[1], code: m[2] };
	const c = /\(([a-z][a-z0-9_]*)\)/.exec(reason);
	if (c) return { rule: "veto", code: c[1] };
	return { rule: "veto", code: "veto_unavailable" };
}

function causeOf(err: unknown): string {
	if (err instanceof VetoError) return err.message;
	const code = (err as any)?.code;
	return typeof code === "string" ? `an error in the extension, ${code}` : "an error in the extension";
}

// VetoError is a cause written here, safe to show: it never holds the event.
class VetoError extends Error {}

function askHook(hook: string[], body: string, limit: number, cwd: string): Promise<Reply> {
	return new Promise((resolve, reject) => {
		const budget = Math.max(100, Math.floor(limit / 2));
		let child;
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
			child.kill("SIGKILL");
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
	if (!tokenFile) throw new VetoError("no token file for veto serve (--veto-token-file)");
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
		res = await fetch(base + "/v1/hooks/pi/command", {
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
