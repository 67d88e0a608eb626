// A host program on the Claude Agent SDK for veto's end-to-end suite: it
// loads veto's module (argv[3], the veto-claude-agent-sdk.ts veto init
// wrote; TypeScript turned into JavaScript with the runtime's pinned
// typescript, as a host's build would), runs one query ("go") with
// withVeto(options) and prints the result. The SDK starts the Claude Code
// CLI it bundles, which talks to $ANTHROPIC_BASE_URL.
//
// With $SDK_E2E_ANSWERS ("yes,no"), the host has a person: its canUseTool
// answers each question veto asked with the next answer (none left: no),
// notes each in $SDK_E2E_ASKED (JSON lines: the tool and what it was
// shown, never the input), and lets every other call through; the SDK's
// permission mode is $SDK_E2E_MODE (default: default). Without it the
// host gives no canUseTool and runs in bypassPermissions.
import { createRequire } from "node:module";
import { appendFileSync, readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { pathToFileURL } from "node:url";

const [runtime, modulePath] = process.argv.slice(2);
const require = createRequire(join(runtime, "package.json"));
const ts = require("typescript");
const js = ts.transpileModule(readFileSync(modulePath, "utf8"), {
	compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
}).outputText;
const built = join(mkdtempSync(join(tmpdir(), "veto-sdk-host-")), "veto.mjs");
writeFileSync(built, js);
const { withVeto } = await import(pathToFileURL(built).href);
const { query } = await import(pathToFileURL(join(runtime, "node_modules", "@anthropic-ai", "claude-agent-sdk", "sdk.mjs")).href);

const answers = (process.env.SDK_E2E_ANSWERS || "").split(",").filter(Boolean);
const notes = process.env.SDK_E2E_ASKED || "";
const options = {
	cwd: process.cwd(),
	maxTurns: 60,
	settingSources: [],
	env: { ...process.env },
	stderr: (d) => process.stderr.write(d),
	permissionMode: "bypassPermissions",
	allowDangerouslySkipPermissions: true,
};
if (process.env.SDK_E2E_ANSWERS !== undefined) {
	options.permissionMode = process.env.SDK_E2E_MODE || "default";
	options.canUseTool = async (toolName, input, o) => {
		if (!o.vetoQuestion) return { behavior: "allow", updatedInput: input }; // the host's own prompt: yes
		const yes = answers.shift() === "yes";
		if (notes) appendFileSync(notes, JSON.stringify({ tool: toolName, shown: o.decisionReason, answer: yes }) + "\n");
		return yes ? { behavior: "allow", updatedInput: input } : { behavior: "deny", message: "no" };
	};
}
// With $SDK_E2E_HOST_ALLOWS, the host has a PreToolUse hook of its own
// that allows every call: veto's denial must still win.
if (process.env.SDK_E2E_HOST_ALLOWS) {
	const allowAll = async () => ({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", permissionDecisionReason: "the host allows it" } });
	options.hooks = { PreToolUse: [{ hooks: [allowAll] }] };
}
// With $SDK_E2E_MODES, a hook of the host's notes the permission mode each
// PreToolUse reports, to check the SDK ran in the mode asked for.
if (process.env.SDK_E2E_MODES) {
	const note = async (input) => (appendFileSync(process.env.SDK_E2E_MODES, String(input.permission_mode) + "\n"), {});
	options.hooks = { ...(options.hooks ?? {}), PreToolUse: [...(options.hooks?.PreToolUse ?? []), { hooks: [note] }] };
}
let result;
for await (const m of query({ prompt: "go", options: withVeto(options) })) {
	if (m.type === "result") result = m;
}
process.stdout.write(JSON.stringify({ subtype: result?.subtype, turns: result?.num_turns, is_error: result?.is_error }) + "\n");
process.exit(result && !result.is_error ? 0 : 1);
