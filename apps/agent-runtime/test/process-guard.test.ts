import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { type SlackStandIn, startSlackStandIn } from "@agentplane/testkit/slack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { fakeModelEnv, tempHome, waitFor } from "./support/runtime.ts";

const MAIN = join(import.meta.dirname, "..", "src", "main.ts");

describe("the runtime as its own process", () => {
  let fake: FakeModel;
  let standIn: SlackStandIn;
  let child: ChildProcess | undefined;
  beforeAll(async () => {
    fake = await startFakeModel();
    standIn = await startSlackStandIn();
    standIn.workspace.addUser("U0OWNER", "olivia");
  });
  afterAll(async () => {
    child?.kill("SIGKILL");
    await standIn.close();
    await fake.close();
  });

  it("keeps serving when an error escapes every handler, and logs it", async () => {
    child = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? "",
        ...fakeModelEnv(fake, tempHome()),
        CHAT_BOT_TOKEN: standIn.botToken,
        CHAT_APP_TOKEN: standIn.appToken,
        CHAT_API_URL: standIn.apiUrl,
        CHAT_OWNER_ID: "U0OWNER",
        PORT: "0",
        HOST: "127.0.0.1",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout?.on("data", (d) => {
      out += String(d);
    });
    let exited: number | null | undefined;
    child.once("exit", (code) => {
      exited = code;
    });
    const url = await waitFor(() => /"url":"(http:\/\/[^"]+)"/.exec(out)?.[1], 20_000);
    await waitFor(async () => {
      const health = (await (await fetch(`${url}/health`)).json()) as { teamChat: string };
      return health.teamChat === "connected" || undefined;
    }, 20_000);

    // An events_api envelope without its event: the Slack client library itself throws on it,
    // outside any of our handlers (an unhandled rejection, which ends a Node process by default).
    standIn.sendEnvelope("events_api", { event_id: "Ev0NOEVENT" });
    await waitFor(() => out.includes("unhandled promise rejection") || undefined, 10_000);
    expect(exited).toBeUndefined();
    expect((await fetch(`${url}/health`)).status).toBe(200);
  }, 60_000);
});
