// A host of pi's RPC mode for veto's end-to-end suite: it starts pi
// (argv[2] and after) with --mode rpc, sends one prompt, answers each
// confirm dialog an extension opens with the next answer of
// $PI_E2E_ANSWERS ("yes,no"; none left: no), notes each dialog's title
// and message in $PI_E2E_CONFIRMS (JSON lines), and ends pi when the
// agent ends.
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";

const [program, ...args] = process.argv.slice(2);
const answers = (process.env.PI_E2E_ANSWERS || "").split(",").filter(Boolean);
const notes = process.env.PI_E2E_CONFIRMS || "";
const pi = spawn(program, [...args, "--mode", "rpc"], { stdio: ["pipe", "pipe", "inherit"] });
const send = (obj) => pi.stdin.write(JSON.stringify(obj) + "\n");
let buf = "";
pi.stdout.on("data", (chunk) => {
	buf += chunk.toString("utf8");
	let i;
	while ((i = buf.indexOf("\n")) >= 0) {
		const line = buf.slice(0, i).replace(/\r$/, "");
		buf = buf.slice(i + 1);
		if (!line) continue;
		let msg;
		try {
			msg = JSON.parse(line);
		} catch {
			continue;
		}
		if (msg.type === "extension_ui_request" && msg.method === "confirm") {
			const yes = answers.shift() === "yes";
			if (notes) appendFileSync(notes, JSON.stringify({ title: msg.title, message: msg.message, answer: yes }) + "\n");
			send({ type: "extension_ui_response", id: msg.id, confirmed: yes });
		} else if (msg.type === "agent_end") {
			pi.stdin.end();
			pi.kill("SIGTERM");
		} else if (msg.type === "response" && msg.success === false) {
			process.stderr.write("pi refused a command: " + line + "\n");
			pi.kill("SIGTERM");
		}
	}
});
pi.on("exit", (code, signal) => process.exit(signal === "SIGTERM" ? 0 : (code ?? 1)));
send({ id: "e2e-1", type: "prompt", message: "go" });
