import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_OWNER_USER_ID } from "../src/config.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { startTestRuntime, tempHome } from "./support/runtime.ts";

let fake: FakeModel;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());

describe("first boot", () => {
  it("creates the agent from the environment and settings.json, and later boots change nothing", async () => {
    const home = tempHome();
    writeFileSync(
      join(home, "settings.json"),
      JSON.stringify({ modelId: "deploy-main", heartbeatModelId: "   ", cronModelId: 42 }),
    );
    const env = { AGENT_ID: "1b4e28ba-2fa1-4d2e-883f-0016d3cca427", AGENT_NAME: "Atlas", TEAM_NAME: "Infra" };
    const first = await startTestRuntime(fake, { home, env });
    const { body: profile } = await first.json("GET", "/agents/profile");
    expect(profile).toMatchObject({
      id: "1b4e28ba-2fa1-4d2e-883f-0016d3cca427",
      name: "Atlas",
      team: "Infra",
      owner: LOCAL_OWNER_USER_ID,
      verbose: false,
      provider: "cloud-b",
      overrides: { main: "deploy-main", heartbeat: null, cron: null },
      models: {
        main: "deploy-main",
        heartbeat: "deploy-main",
        cron: "deploy-main",
        classification: "claude-haiku-4-5",
      },
    });
    const { body: threads } = await first.json<{ items: Array<{ main: boolean }> }>("GET", "/agents/threads");
    expect(threads.items).toHaveLength(1);
    expect(threads.items[0]?.main).toBe(true);
    await first.close();

    writeFileSync(join(home, "settings.json"), JSON.stringify({ modelId: "other" }));
    const second = await startTestRuntime(fake, {
      home,
      env: { AGENT_ID: "9f0c1d2e-0000-4000-8000-000000000000", AGENT_NAME: "Changed", TEAM_NAME: "Changed" },
    });
    const { body: again } = await second.json("GET", "/agents/profile");
    expect(again).toMatchObject({ id: profile.id, name: "Atlas", team: "Infra", overrides: profile.overrides });
    const { body: threadsAgain } = await second.json<{ items: unknown[] }>("GET", "/agents/threads");
    expect(threadsAgain.items).toHaveLength(1);
    await second.close();
  });

  it("generates an agent id once and reuses it; a malformed settings.json seeds nothing", async () => {
    const home = tempHome();
    writeFileSync(join(home, "settings.json"), "{not json");
    const first = await startTestRuntime(fake, { home });
    const { body: a } = await first.json("GET", "/agents/profile");
    expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(a).toMatchObject({ name: "Prism", team: "Local", overrides: { main: null, heartbeat: null, cron: null } });
    await first.close();
    const second = await startTestRuntime(fake, { home });
    const { body: b } = await second.json("GET", "/agents/profile");
    expect(b.id).toBe(a.id);
    await second.close();
  });
});

describe("settings API", () => {
  it("sets verbose and the model overrides; null and empty string clear", async () => {
    const rt = await startTestRuntime(fake);
    try {
      expect((await rt.json("PATCH", "/agents/verbose", { verbose: true })).body.verbose).toBe(true);
      const set = await rt.json("PATCH", "/agents/models", { main: "m-main", cron: "m-cron" });
      expect(set.body).toMatchObject({
        overrides: { main: "m-main", heartbeat: null, cron: "m-cron" },
        models: { main: "m-main", heartbeat: "m-main", cron: "m-cron" },
      });
      const cleared = await rt.json("PATCH", "/agents/models", { main: null, cron: "" });
      expect(cleared.body).toMatchObject({
        overrides: { main: null, heartbeat: null, cron: null },
        models: { main: "claude-sonnet-4-6", heartbeat: "claude-sonnet-4-6", cron: "claude-sonnet-4-6" },
      });
      expect((await rt.json("GET", "/agents/profile")).body.verbose).toBe(true);
    } finally {
      await rt.close();
    }
  });

  it("answers schema violations with a 400 problem listing errors", async () => {
    const rt = await startTestRuntime(fake);
    try {
      const res = await rt.request("PATCH", "/agents/verbose", { verbose: "yes" });
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toContain("application/problem+json");
      const problem = (await res.json()) as { errors: Array<{ pointer: string }> };
      expect(problem.errors[0]?.pointer).toBe("/body/verbose");
      const unknown = await rt.json<{ errors: Array<{ pointer: string }> }>("PATCH", "/agents/models", { model: "x" });
      expect(unknown.status).toBe(400);
      expect(unknown.body.errors[0]?.pointer).toBe("/body/model");
    } finally {
      await rt.close();
    }
  });
});

describe("threads", () => {
  it("creates and lists web threads; unknown threads are 404", async () => {
    const rt = await startTestRuntime(fake);
    try {
      const created = await rt.json("POST", "/agents/threads", { title: "Release planning" });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ title: "Release planning", main: false });
      const list = await rt.json<{ items: Array<{ id: string }> }>("GET", "/agents/threads");
      expect(list.body.items.map((t) => t.id)).toContain(created.body.id);
      const missing = await rt.request("GET", "/agents/threads/thr_missing/messages");
      expect(missing.status).toBe(404);
      expect(missing.headers.get("content-type")).toContain("application/problem+json");
      expect((await rt.request("GET", "/health")).status).toBe(200);
    } finally {
      await rt.close();
    }
  });

  it("refuses a title with control or bidirectional formatting characters (the UIs show titles)", async () => {
    const rt = await startTestRuntime(fake);
    try {
      for (const title of ["\u001b]2;owned\u0007", "invoice\u202efdp.exe", "two\nlines"]) {
        const refused = await rt.json<{ errors: Array<{ pointer: string; message: string }> }>(
          "POST",
          "/agents/threads",
          { title },
        );
        expect(refused.status, JSON.stringify(title)).toBe(400);
        expect(refused.body.errors[0]).toMatchObject({ pointer: "/body/title" });
        expect(refused.body.errors[0]?.message).toContain("control or bidirectional formatting characters");
      }
      expect((await rt.json("POST", "/agents/threads", { title: "Überblick 📦 — Q3" })).status).toBe(201);
    } finally {
      await rt.close();
    }
  });
});
