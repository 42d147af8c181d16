import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ProblemError } from "@agentplane/problem-details";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentFront } from "../src/agent-front.ts";

// A runtime stand-in: /hang takes the request and never answers, /stream answers at once and
// then sends a second event well after the bound.
function standIn(): Server {
  return createServer((req, res) => {
    if (req.url === "/agents/hang") return;
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: first\n\n");
    setTimeout(() => res.end("data: later\n\n"), 600);
  });
}

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );

async function problemOf(promise: Promise<unknown>): Promise<ProblemError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof ProblemError) return err;
    throw err;
  }
  throw new Error("expected a problem");
}

describe("the gateway's wait for the agent runtime", () => {
  const server = standIn();
  let url: string;
  const front = new AgentFront({ timeoutMs: 250 });
  const forward = (path: string) =>
    front.forward(
      new Request(`http://gateway.test/agent/api${path}`),
      new URL(`http://gateway.test/agent/api${path}`),
      { kind: "api", runtimePath: path },
      "req-1",
    );

  beforeAll(async () => {
    url = await listen(server);
    front.connect({ url, projectId: "prj_1" });
  });
  afterAll(async () => {
    front.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("answers a 504 naming the bound when the runtime takes the request and never answers", async () => {
    const started = performance.now();
    const problem = await problemOf(forward("/agents/hang"));
    expect(performance.now() - started).toBeLessThan(2000);
    expect(problem.status).toBe(504);
    expect(problem.detail).toContain("AGENT_RUNTIME_TIMEOUT_MS");
  });

  it("lets an answer that has started stream on past the bound", async () => {
    const response = await forward("/agents/stream");
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("data: first\n\ndata: later\n\n");
  });

  it("answers a 502 naming the cause when nothing listens", async () => {
    const closed = new AgentFront({ timeoutMs: 5000 });
    const spare = createServer();
    const spareUrl = await listen(spare);
    await new Promise((resolve) => spare.close(resolve));
    closed.connect({ url: spareUrl, projectId: "prj_1" });
    const problem = await problemOf(
      closed.forward(
        new Request("http://gateway.test/agent/api/agents/profile"),
        new URL("http://gateway.test/"),
        {
          kind: "api",
          runtimePath: "/agents/profile",
        },
        "req-2",
      ),
    );
    closed.close();
    expect(problem.status).toBe(502);
    expect(problem.detail).toContain("connection refused");
  });
});
