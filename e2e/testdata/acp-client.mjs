// A minimal Agent Client Protocol host for measuring Copilot CLI's --acp
// mode: it starts the agent (argv after the log path), opens a session,
// sends one prompt, logs every message, and answers each permission
// request by rejecting it (or the option kind VETO_ACP_ANSWER names).
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

const [logPath, cmd, ...args] = process.argv.slice(2);
const log = (dir, m) => appendFileSync(logPath, dir + " " + JSON.stringify(m) + "\n");
const agent = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
let next = 1;
const waiting = new Map();
const send = (m) => { log(">", m); agent.stdin.write(JSON.stringify(m) + "\n"); };
const call = (method, params) => new Promise((resolve) => { const id = next++; waiting.set(id, resolve); send({ jsonrpc: "2.0", id, method, params }); });
createInterface({ input: agent.stdout }).on("line", (line) => {
  let m;
  try { m = JSON.parse(line); } catch { log("?", line); return; }
  log("<", m);
  if (m.id !== undefined && m.method === undefined && waiting.has(m.id)) { waiting.get(m.id)(m); waiting.delete(m.id); return; }
  if (m.method === "session/request_permission") {
    const want = process.env.VETO_ACP_ANSWER || "reject_once";
    const opt = (m.params.options || []).find((o) => o.kind === want);
    send({ jsonrpc: "2.0", id: m.id, result: { outcome: opt ? { outcome: "selected", optionId: opt.optionId } : { outcome: "cancelled" } } });
    return;
  }
  if (m.id !== undefined && m.method !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "not supported" } });
});
const timer = setTimeout(() => { log("!", "timeout"); agent.kill(); process.exit(0); }, 90000);
const init = await call("initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false } });
const s = await call("session/new", { cwd: process.cwd(), mcpServers: [] });
const id = s.result && s.result.sessionId;
const r = await call("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "go" }] });
log("=", { init: !!init.result, session: id, prompt: r.result || r.error });
clearTimeout(timer);
agent.kill();
process.exit(0);
