import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, type TestRuntime, tempHome } from "./support/runtime.ts";

let fake: FakeModel;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());

interface Channels {
  data: Array<{ id: string; name: string | null; linkedAt: string; main: boolean }>;
}

describe("team-chat configuration", () => {
  const base = { AGENT_HOME: tempHome(), LLM_PROVIDER: "cloud-b", CLOUD_B_API_KEY: "k", CLOUD_B_RESOURCE_NAME: "r" };

  it("refuses a bot token without the app token, naming CHAT_APP_TOKEN and never the token", () => {
    const attempt = () => loadConfig({ ...base, CHAT_BOT_TOKEN: "xoxb-secret-value" });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/^CHAT_APP_TOKEN: is required with CHAT_BOT_TOKEN/);
    expect(() => attempt()).not.toThrow(/xoxb-secret-value/);
  });

  it("defaults to personal mode and the public Web API, and checks the mode and owner id", () => {
    const config = loadConfig(base);
    expect(config.env.CHAT_MODE).toBe("personal");
    expect(config.env.CHAT_API_URL).toBe("https://slack.com/api/");
    expect(() => loadConfig({ ...base, CHAT_MODE: "party" })).toThrow(/^CHAT_MODE: must be personal or team/);
    expect(() => loadConfig({ ...base, CHAT_OWNER_ID: "bob" })).toThrow(/^CHAT_OWNER_ID:/);
    expect(() => loadConfig({ ...base, CHAT_API_URL: "not a url" })).toThrow(/^CHAT_API_URL:/);
  });
});

describe("linked channels API", () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await startTestRuntime(fake);
  });
  afterAll(() => rt.close());

  it("reports team chat as off without a bot token, on /health and on the team-chat state", async () => {
    expect((await rt.json("GET", "/health")).body).toMatchObject({ status: "ok", teamChat: "off" });
    const { status, body } = await rt.json("GET", "/agents/team-chat");
    expect(status).toBe(200);
    expect(body).toMatchObject({ state: "off", mode: "personal", owner: { id: null, source: null } });
  });

  it("links, flags one main channel, unlinks, and keeps the oldest link first", async () => {
    expect((await rt.json<Channels>("GET", "/agents/team-chat/channels")).body.data).toEqual([]);
    await rt.json("PATCH", "/agents/team-chat/channels/C0AAA", { linked: true });
    await new Promise((r) => setTimeout(r, 5));
    await rt.json("PATCH", "/agents/team-chat/channels/C0BBB", { linked: true });
    let res = await rt.json<Channels>("PATCH", "/agents/team-chat/channels/C0BBB", { main: true });
    expect(res.status).toBe(200);
    expect(res.body.data.map((c) => [c.id, c.main])).toEqual([
      ["C0AAA", false],
      ["C0BBB", true],
    ]);
    res = await rt.json<Channels>("PATCH", "/agents/team-chat/channels/C0AAA", { main: true });
    expect(res.body.data.map((c) => [c.id, c.main])).toEqual([
      ["C0AAA", true],
      ["C0BBB", false],
    ]);
    // Linking again keeps the original link time.
    const before = res.body.data[0]?.linkedAt;
    res = await rt.json<Channels>("PATCH", "/agents/team-chat/channels/C0AAA", { linked: true });
    expect(res.body.data[0]?.linkedAt).toBe(before);
    res = await rt.json<Channels>("PATCH", "/agents/team-chat/channels/C0AAA", { linked: false });
    expect(res.body.data.map((c) => c.id)).toEqual(["C0BBB"]);
  });

  it("answers 404 for a channel that is not linked and 400 for a malformed id or body", async () => {
    const missing = await rt.request("PATCH", "/agents/team-chat/channels/C0NOPE", { main: true });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toContain("application/problem+json");
    expect((await rt.request("PATCH", "/agents/team-chat/channels/C0NOPE", { linked: false })).status).toBe(404);
    expect((await rt.request("PATCH", "/agents/team-chat/channels/not-an-id", { main: true })).status).toBe(400);
    expect((await rt.request("PATCH", "/agents/team-chat/channels/C0BBB", { main: "yes" })).status).toBe(400);
    expect((await rt.request("PATCH", "/agents/team-chat/channels/C0BBB", { extra: 1 })).status).toBe(400);
  });

  it("resets the paired owner by issuing a pairing code, and lists the operations in the OpenAPI document", async () => {
    const { status, body } = await rt.json("DELETE", "/agents/team-chat/owner");
    expect(status).toBe(200);
    expect(body).toMatchObject({ owner: { id: null, source: null, pairingPending: true } });
    const doc = (
      await rt.json<{ paths: Record<string, Record<string, { operationId: string }>> }>("GET", "/openapi.json")
    ).body;
    expect(doc.paths["/agents/team-chat/channels"]?.get?.operationId).toBe("listTeamChatChannels");
    expect(doc.paths["/agents/team-chat/channels/{channelId}"]?.patch?.operationId).toBe("updateTeamChatChannel");
    expect(doc.paths["/agents/team-chat"]?.get?.operationId).toBe("getTeamChat");
    expect(doc.paths["/agents/team-chat/owner"]?.delete?.operationId).toBe("resetTeamChatOwner");
  });

  it("refuses to reset an owner set by CHAT_OWNER_ID", async () => {
    const other = await startTestRuntime(fake, { env: { CHAT_OWNER_ID: "U0OWNER" } });
    try {
      expect((await other.json("GET", "/agents/team-chat")).body).toMatchObject({
        owner: { id: "U0OWNER", source: "env", pairingPending: false },
      });
      expect((await other.request("DELETE", "/agents/team-chat/owner")).status).toBe(409);
    } finally {
      await other.close();
    }
  });
});
