// Times veto's pi extension against the real veto-hook ($VETO_HOOK): the
// tool_call handler for a read of argv[4] (in the working directory
// argv[5]), argv[6] times after a warm-up, with a pi API of the test's.
// Prints {"allowed": N, "ms": [...]} on stdout.
import { createRequire } from "node:module";
import { join } from "node:path";

const [runtime, extension, file, cwd, n] = process.argv.slice(2);
const require = createRequire(join(runtime, "package.json"));
const { createJiti } = require("jiti");
const mod = await createJiti(import.meta.url).import(extension);
const handlers = {};
mod.default({ on: (ev, h) => (handlers[ev] = h), appendEntry: () => {}, registerFlag: () => {}, getFlag: () => undefined });
const ctx = { cwd, hasUI: false, ui: {}, sessionManager: { getSessionId: () => "timing-1", getEntries: () => [] } };
await handlers.session_start({ reason: "startup" }, ctx);
const ms = [];
let allowed = 0;
for (let i = 0; i < Number(n) + 3; i++) {
	const t0 = performance.now();
	const r = await handlers.tool_call({ toolName: "read", toolCallId: "t-" + i, input: { path: file } }, ctx);
	const dt = performance.now() - t0;
	if (i >= 3) {
		ms.push(dt);
		if (r === undefined) allowed++;
	}
	await handlers.tool_result({ toolName: "read", toolCallId: "t-" + i, input: { path: file }, isError: false }, ctx);
}
console.log(JSON.stringify({ allowed, ms }));
