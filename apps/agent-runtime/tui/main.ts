#!/usr/bin/env node
// The agent runtime's terminal UI: `npm run tui` from a checkout, or the `agentplane-agent` bin.
import { render } from "ink";
import { createElement } from "react";
import { RuntimeClient } from "../client/api.ts";
import { App } from "./app.ts";

const DEFAULT_URL = "http://localhost:3003";

function threadArg(argv: string[]): string | undefined {
  const i = argv.indexOf("--thread");
  return i >= 0 ? argv[i + 1] : undefined;
}

if (process.argv.includes("--help")) {
  process.stdout.write(
    "agentplane-agent [--thread <id>]\n  Chat with the agent runtime at AGENT_HTTP_URL (default http://localhost:3003).\n  Type /help inside for the commands.\n",
  );
  process.exit(0);
}
if (!process.stdin.isTTY) {
  process.stderr.write("agentplane-agent needs an interactive terminal\n");
  process.exit(2);
}

const url = process.env.AGENT_HTTP_URL?.trim() || DEFAULT_URL;
const threadId = threadArg(process.argv);
// Ctrl-C is the app's own: the first stops a running turn, the second within 2 s quits.
const app = render(createElement(App, { client: new RuntimeClient(url), url, ...(threadId ? { threadId } : {}) }), {
  exitOnCtrlC: false,
});
await app.waitUntilExit();
process.exit(0);
