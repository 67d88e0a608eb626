// veto's guard for the Claude Agent SDK (npm @anthropic-ai/claude-agent-sdk):
// before each tool call runs, veto decides it; a refusal reaches the model
// as the SDK's deny with veto's reason (its rule and reason code); every
// result is recorded as an observation; a question goes to the host's
// canUseTool, where the host gave one, and is refused where it did not.
//
// Use it by wrapping the options of query():
//
//	import { query } from "@anthropic-ai/claude-agent-sdk";
//	import { withVeto } from "./veto-claude-agent-sdk.ts";
//	for await (const m of query({ prompt, options: withVeto({ cwd, canUseTool }) })) { ... }
//
// `veto init claude-agent-sdk [--dir DIR]` writes this file as
// DIR/veto-claude-agent-sdk.ts and fills in INSTALLED below with the veto
// it was installed by (or, with --url, veto serve's URL and the token's
// file).
//
// How it reaches veto, in order: the second argument of withVeto, then
// $VETO_URL with $VETO_TOKEN_FILE (veto serve's command hook, POST
// URL/v1/hooks/claude-agent-sdk/command), else $VETO_HOOK, then INSTALLED,
// then veto-hook on PATH: the program is run with the hook input on stdin,
// as every client's hook is (it asks veto serve-hooks, starting it when
// none runs). The limit (timeoutMs, $VETO_SDK_TIMEOUT_MS, 5000 ms by
// default) bounds every answer; veto-hook is given half of it.
//
// Fail closed: the call goes on only when veto's reply is exactly the
// allow ({"block":false}, exit 0). A program that cannot start, an answer
// past the limit, a reply that does not parse, an error here: the call is
// denied, the reason naming the cause, never the call's arguments. The
// hooks are registered with onFailure "block", so a callback the SDK
// itself times out or sees throw blocks the call too.
//
// The protocol is package claudeagentsdk's (the Go adapter): the SDK's
// hook input, which is Claude Code's hook payload, without the tool's
// output (tool_response), with veto_protocol and veto_can_ask added.

import { spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";

// veto init claude-agent-sdk writes this line; it is the configuration of
// an installed copy (the hook program and its arguments, or veto serve's
// URL and the token's file). Empty: the argument and environment say.
const INSTALLED: { hook?: string[]; url?: string; tokenFile?: string; timeoutMs?: number } = {}; // veto init claude-agent-sdk

const PROTOCOL = 1;
const CLIENT = "claude-agent-sdk";
const DEFAULT_LIMIT_MS = 5000;
const MAX_REPLY = 1 << 20;

/** How the module reaches veto; every field optional. */
export type VetoConfig = { hook?: string[]; url?: string; tokenFile?: string; timeoutMs?: number };

type Reply = { exit: number; stdout: string; stderr: string };
type Verdict =
	| { kind: "allow" }
	| { kind: "deny"; reason: string; failure?: boolean }
	| { kind: "ask"; reason: string };

// The parts of the SDK's API this guard uses (its HookCallback,
// HookCallbackMatcher, CanUseTool and PermissionResult; declared here so
// the file stands without the SDK's type package).
type HookInput = { hook_event_name: string; session_id: string; cwd: string; tool_name?: string; tool_input?: unknown; tool_use_id?: string; [k: string]: unknown };
type HookOutput = Record<string, unknown>;
type HookCallback = (input: HookInput, toolUseID: string | undefined, options: { signal: AbortSignal }) => Promise<HookOutput>;
type HookMatcher = { matcher?: string; hooks: HookCallback[]; timeout?: number; onFailure?: "continue" | "block" };
type PermissionResult =
	| { behavior: "allow"; updatedInput?: Record<string, unknown>; updatedPermissions?: unknown[]; [k: string]: unknown }
	| { behavior: "deny"; message: string; interrupt?: boolean; [k: string]: unknown };
type CanUseTool = (toolName: string, input: Record<string, unknown>, options: { signal: AbortSignal; toolUseID: string; decisionReason?: string; [k: string]: unknown }) => Promise<PermissionResult | null>;
type Options = { hooks?: Partial<Record<string, HookMatcher[]>>; canUseTool?: CanUseTool; [k: string]: unknown };

/**
 * withVeto returns the SDK's options with veto's hooks first in
 * PreToolUse, PostToolUse, PostToolUseFailure and SessionStart (the
 * host's own hooks kept after them), and, where the host gave a
 * canUseTool, one that puts veto's questions to it.
 */
export function withVeto<O extends Options>(options?: O, config?: VetoConfig): O {
	const opts = (options ?? {}) as O;
	const host = typeof opts.canUseTool === "function" ? opts.canUseTool : undefined;
	const c = configOf(config);
	// The calls veto asked about, by tool use id, until canUseTool is asked.
	const asked = new Map<string, { reason: string; input: HookInput }>();

	const send = (input: HookInput, extra: Record<string, unknown>, signal?: AbortSignal): Promise<Reply> => {
		// The tool's output is never sent: veto records what a call did
		// from its input and outcome, and an output may be large or secret.
		const { tool_response: _output, ...event } = input;
		const body = JSON.stringify({ ...event, ...extra, veto_protocol: PROTOCOL });
		return c.url ? askServe(c.url, c.tokenFile, body, c.limit, signal) : askHook(c.hook, body, c.limit, input.cwd || process.cwd(), signal);
	};

	const deny = (reason: string): HookOutput => ({
		hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason },
	});

	const preToolUse: HookCallback = async (input, toolUseID, { signal }) => {
		try {
			if (input?.hook_event_name !== "PreToolUse") throw new VetoError("the SDK sent another event to the PreToolUse hook");
			const v = verdictOf(await send(input, { veto_can_ask: !!host }, signal));
			if (v.kind === "allow") return {}; // the host's own permission flow decides the rest
			if (v.kind === "deny") return deny(v.reason);
			const id = String(input.tool_use_id ?? toolUseID ?? "");
			if (!host || !id) return deny(v.reason + " The host gave no canUseTool to ask a person, so the call is refused.");
			asked.set(id, { reason: v.reason, input });
			return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: v.reason } };
		} catch (err) {
			return deny(`veto's Claude Agent SDK module could not get veto's answer (${causeOf(err)}), so the call is blocked.`);
		}
	};

	// observe records what a call did, or the start of a session; it never
	// throws: the call has run, or every call still asks.
	const observe: HookCallback = async (input, _id, { signal }) => {
		try {
			await send(input, {}, signal);
		} catch {
			// Not recorded; nothing to block.
		}
		return {};
	};

	const canUseTool: CanUseTool | undefined = host
		? async (toolName, input, options) => {
				const q = asked.get(options?.toolUseID);
				if (!q) return host(toolName, input, options); // not veto's question: the host's own prompt
				asked.delete(options.toolUseID);
				const { rule, code } = ruleOf(q.reason);
				let r: PermissionResult | null = null;
				try {
					r = await host(toolName, input, { ...options, decisionReason: q.reason, vetoQuestion: q.reason });
				} catch {
					r = null; // a prompt that failed is no yes
				}
				if (r && r.behavior === "allow") {
					// The person's yes is for the call veto asked about, as asked:
					// never an input the prompt changed.
					return { ...r, behavior: "allow", updatedInput: input };
				}
				// The person's no is recorded, tried three times, a moment apart
				// (a busy moment of the state or the hook server: a reply that
				// is not exit 0 did not record it either), within the module's
				// limit and not the SDK's signal: the SDK may have given up on
				// the prompt (bypassPermissions) once it is answered. The call
				// is refused all the same.
				for (let i = 0; i < 3; i++) {
					try {
						const r = await send({ ...q.input, hook_event_name: "PermissionDenied" }, { veto_answer: "refused" });
						if (r.exit === 0) break;
					} catch {
						// Not recorded yet.
					}
					await new Promise((done) => setTimeout(done, 200 * (i + 1)));
				}
				return {
					behavior: "deny",
					message: `The person refused this ${toolName} call at the host's prompt (veto asked: rule ${rule}, reason ${code}). Do not retry it or work around it; ask the user how to proceed.`,
				};
			}
		: undefined;

	const timeout = Math.ceil(c.limit / 1000) + 5; // the SDK's own bound, past the module's
	const mine: Record<string, HookMatcher> = {
		PreToolUse: { hooks: [preToolUse], timeout, onFailure: "block" },
		PostToolUse: { hooks: [observe], timeout },
		PostToolUseFailure: { hooks: [observe], timeout },
		SessionStart: { hooks: [observe], timeout },
	};
	const hooks: Partial<Record<string, HookMatcher[]>> = { ...(opts.hooks ?? {}) };
	for (const [event, m] of Object.entries(mine)) hooks[event] = [m, ...(hooks[event] ?? [])];
	const out: Options = { ...opts, hooks };
	if (canUseTool) out.canUseTool = canUseTool;
	return out as O;
}

function configOf(config?: VetoConfig) {
	const env = process.env;
	const url = config?.url || env.VETO_URL || INSTALLED.url || "";
	const tokenFile = config?.tokenFile || env.VETO_TOKEN_FILE || INSTALLED.tokenFile || "";
	const hook = config?.hook?.length
		? config.hook
		: env.VETO_HOOK
			? [env.VETO_HOOK, CLIENT]
			: INSTALLED.hook?.length
				? INSTALLED.hook
				: ["veto-hook", CLIENT];
	let limit = Number(config?.timeoutMs || env.VETO_SDK_TIMEOUT_MS || INSTALLED.timeoutMs || DEFAULT_LIMIT_MS);
	if (!Number.isFinite(limit) || limit <= 0) limit = DEFAULT_LIMIT_MS;
	return { url, tokenFile, hook, limit };
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
		return { kind: "deny", reason: `veto gave no answer the module can read (exit ${r.exit}: ${why}), so the call is blocked.`, failure: true };
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
	return typeof code === "string" ? `an error in the module, ${code}` : "an error in the module";
}

// VetoError is a cause written here, safe to show: it never holds the event.
class VetoError extends Error {}

function askHook(hook: string[], body: string, limit: number, cwd: string, signal?: AbortSignal): Promise<Reply> {
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
			signal?.removeEventListener("abort", onAbort);
			f();
		};
		const timer = setTimeout(() => {
			child.kill("SIGKILL");
			finish(() => reject(new VetoError(`veto did not answer within ${limit} ms`)));
		}, limit);
		const onAbort = () => {
			child.kill("SIGKILL");
			finish(() => reject(new VetoError("the SDK cancelled the hook")));
		};
		if (signal?.aborted) onAbort();
		else signal?.addEventListener("abort", onAbort);
		child.on("error", (err: any) => finish(() => reject(new VetoError(`${hook[0]} could not be started: ${err?.code ?? "error"}`))));
		child.stdout.on("data", (b: Buffer) => {
			if (outLen < MAX_REPLY) out.push(b), (outLen += b.length);
		});
		child.stderr.on("data", (b: Buffer) => {
			if (errLen < MAX_REPLY) errOut.push(b), (errLen += b.length);
		});
		child.on("close", (code: number | null, sig: string | null) =>
			finish(() => {
				if (code === null) reject(new VetoError(`${hook[0]} was killed (${sig ?? "signal"})`));
				else resolve({ exit: code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(errOut).toString("utf8") });
			}),
		);
		child.stdin.on("error", () => {}); // a program that exits unread: its exit says why
		child.stdin.end(body);
	});
}

async function askServe(url: string, tokenFile: string, body: string, limit: number, signal?: AbortSignal): Promise<Reply> {
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
	const signals = [AbortSignal.timeout(limit), ...(signal ? [signal] : [])];
	let res: Response;
	try {
		res = await fetch(base + "/v1/hooks/" + CLIENT + "/command", {
			method: "POST",
			headers: { "content-type": "application/json", authorization: "Bearer " + token },
			body,
			signal: signals.length > 1 && typeof (AbortSignal as any).any === "function" ? (AbortSignal as any).any(signals) : signals[0],
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
