import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket as NodeWebSocket } from "ws";
import { requireBwrap } from "../../../apps/platform/test/sandbox-harness.ts";
import { openExecStream, type WebSocketConstructor } from "../src/exec.ts";
import { type AgentplaneClient, createAgentplaneClient, ProblemError } from "../src/index.ts";
import { startTestPlatform, type TestPlatform } from "./platform.ts";

const bwrap = requireBwrap();

describe.skipIf(!bwrap.available)(`the exec stream${bwrap.reason}`, () => {
  let p: TestPlatform;
  let sdk: AgentplaneClient;
  let projectId = "";
  let sandboxId = "";

  beforeAll(async () => {
    p = await startTestPlatform();
    sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    const org = await sdk.request("createOrganization", { body: { name: "Acme" } });
    projectId = (await sdk.request("createProject", { path: { orgId: org.id }, body: { name: "p" } })).id;
    sandboxId = (await sdk.request("createSandbox", { path: { projectId }, body: { name: "box", start: true } })).id;
  });
  afterAll(async () => {
    await p?.close();
  });

  it("streams stdin in, stdout and stderr out, and the exit code (global WebSocket)", async () => {
    const stream = await openExecStream({
      baseUrl: p.url,
      token: p.ownerToken,
      projectId,
      sandboxId,
      command: ["sh", "-c", "wc -c; echo oops >&2; exit 7"],
    });
    expect(stream.protocol).toBe("v5.channel.k8s.io");
    const out: string[] = [];
    const err: string[] = [];
    const decoder = new TextDecoder();
    stream.onStdout((c) => out.push(decoder.decode(c)));
    stream.onStderr((c) => err.push(decoder.decode(c)));
    stream.write("x".repeat(100_000));
    stream.end();
    const exit = await stream.exited;
    expect(exit.exitCode).toBe(7);
    expect(out.join("").trim()).toBe("100000");
    expect(err.join("")).toBe("oops\n");
  });

  it("refuses a stopped sandbox with the 409 problem when given the ws package", async () => {
    const stopped = await sdk.request("createSandbox", { path: { projectId }, body: { name: "off", start: false } });
    const error = await openExecStream({
      baseUrl: p.url,
      token: p.ownerToken,
      projectId,
      sandboxId: stopped.id,
      command: ["true"],
      WebSocket: NodeWebSocket as unknown as WebSocketConstructor,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProblemError);
    expect((error as ProblemError).status).toBe(409);
    expect((error as ProblemError).detail).toBeTruthy();
  });
});
