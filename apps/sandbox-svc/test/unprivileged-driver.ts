// The local driver as a user other than root (local-driver-unprivileged.test.ts starts this so):
// one sandbox behind the egress proxy; a command run in it, a port forwarded to a server inside
// it and a request out through its proxy. Prints what each saw as one JSON line.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { silentLogger } from "@agentplane/service-kit";
import { LocalDriver } from "../src/driver/local/local-driver.ts";
import { EgressProxy } from "../src/egress/proxy.ts";
import { runCommand } from "../src/exec/run-command.ts";

const dataDir = process.argv[2] as string;
const upstream = createServer((_req, res) => res.end("from the host"));
await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
const proxy = new EgressProxy({
  logger: silentLogger(),
  decide: async () => ({ allowed: true }),
  hostMap: { "upstream.test": `127.0.0.1:${(upstream.address() as AddressInfo).port}` },
});
const driver = new LocalDriver({ dataDir, logger: silentLogger(), egress: proxy });
const id = "sbx_unpriv";
const result: Record<string, unknown> = { uid: process.getuid?.() };
try {
  await driver.start({ id, slug: "unpriv", image: "default", env: {}, resources: {} });
  const sh = (script: string) => runCommand(driver, id, { argv: ["/bin/sh", "-c", script], timeoutMs: 10_000 });
  const who = await sh("id -u; hostname; grep CapEff /proc/self/status; touch /usr/x 2>/dev/null || echo read-only");
  result.exec = { exitCode: who.exitCode, stdout: who.stdout, stderr: who.stderr };
  const fetch = "import urllib.request; print(urllib.request.urlopen('http://upstream.test/').read().decode())";
  const out = await runCommand(driver, id, { argv: ["python3", "-c", fetch], timeoutMs: 10_000 });
  result.egress = { exitCode: out.exitCode, stdout: out.stdout, stderr: out.stderr.slice(-500) };
  const server =
    "import http.server as s; s.HTTPServer(('127.0.0.1', 8000), s.SimpleHTTPRequestHandler).serve_forever()";
  await sh("echo inside > /workspace/page.txt");
  void runCommand(driver, id, { argv: ["python3", "-c", server], cwd: "/workspace", timeoutMs: 30_000 });
  let page = "";
  for (let attempt = 0; attempt < 50 && !page.includes("inside"); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stream = await driver.portForward(id, 8000);
    page = await new Promise<string>((resolve) => {
      let text = "";
      stream.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
      });
      stream.on("close", () => resolve(text));
      stream.on("error", () => resolve(text));
      stream.end("GET /page.txt HTTP/1.0\r\n\r\n");
    });
  }
  result.portForward = page.slice(page.indexOf("\r\n\r\n") + 4);
} catch (err) {
  result.error = (err as Error).message;
}
await driver.close();
upstream.close();
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
