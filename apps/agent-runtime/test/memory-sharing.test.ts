import { AGENT_MANAGE_HEADER } from "@agentplane/contracts/runtime";
import type { SlackStandIn } from "@agentplane/testkit/slack";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SHARE_REFUSED } from "../src/memory/memory-tool.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { readSse, startTestRuntime, type TestRuntime, waitFor } from "./support/runtime.ts";
import { calls, scripted, text, toolResultsOf, toolUse } from "./support/script.ts";
import { answers, freshStandIn, type SlackTestRuntime, settled, startSlackRuntime } from "./support/slack.ts";

const OWNER = "U0OWNER";
const MEMBER = "U0MEMBER";

let fake: FakeModel;
let rt: TestRuntime | undefined;
let standIn: SlackStandIn | undefined;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  await standIn?.close();
  standIn = undefined;
  fake.requests.length = 0;
});

type Note = { id: string; text: string; shared: boolean };

/** A web turn in the main thread; `manage: false` is a caller the platform says may not change the agent. */
async function webTurn(runtime: TestRuntime, message: string, manage = true): Promise<void> {
  const threads = await runtime.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
  const main = threads.body.items.find((t) => t.main)?.id as string;
  const res = await runtime.request(
    "POST",
    `/agents/threads/${main}/messages`,
    { text: message },
    { [AGENT_MANAGE_HEADER]: String(manage) },
  );
  expect(res.status).toBe(200);
  await readSse(res);
}

describe("the owner shares a memory note with the team", () => {
  it("through the API: PATCH /agents/memory/{id} sets and clears the flag that members' turns search by", async () => {
    rt = await startTestRuntime(fake);
    const memory = rt.runtime.deps.memory;
    const note = await memory.add("The on-call rotation swaps on Mondays", "web");
    const reachedByMembers = async () =>
      (await memory.search("on-call rotation", 5, { sharedOnly: true })).map((h) => h.id);
    expect(await reachedByMembers()).toEqual([]);
    expect((await rt.json<{ items: Note[] }>("GET", "/agents/memory")).body.items[0]).toMatchObject({ shared: false });

    const shared = await rt.json<Note>("PATCH", `/agents/memory/${note.id}`, { shared: true });
    expect(shared).toMatchObject({ status: 200, body: { id: note.id, shared: true } });
    expect(await reachedByMembers()).toEqual([note.id]);
    const listed = await rt.json<{ items: Note[] }>("GET", "/agents/memory?q=rotation");
    expect(listed.body.items[0]).toMatchObject({ id: note.id, shared: true });

    expect((await rt.json<Note>("PATCH", `/agents/memory/${note.id}`, { shared: false })).body.shared).toBe(false);
    expect(await reachedByMembers()).toEqual([]);

    const missing = await rt.request("PATCH", "/agents/memory/mem_nope", { shared: true });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toContain("application/problem+json");
    for (const body of [{ shared: "yes" }, {}, { shared: true, text: "rewritten" }]) {
      const bad = await rt.request("PATCH", `/agents/memory/${note.id}`, body);
      expect(bad.status).toBe(400);
      expect(bad.headers.get("content-type")).toContain("application/problem+json");
    }
    expect(memory.recent()[0]).toMatchObject({ text: "The on-call rotation swaps on Mondays", shared: false });
  });

  it("through the memory tool, in the owner's own turns only", async () => {
    rt = await startTestRuntime(fake);
    const memory = rt.runtime.deps.memory;
    const note = await memory.add("The release checklist lives in docs/release.md", "web");
    const share = (shared: boolean) =>
      scripted([calls(toolUse("memory", { action: "share", id: note.id, shared })), text("done")]);

    // A caller who may chat but not change the agent cannot share the owner's note.
    fake.respond = share(true);
    await webTurn(rt, "share the release checklist note with the team", false);
    const [refused] = toolResultsOf(fake.requests[1]?.body ?? {});
    expect(refused).toMatchObject({ is_error: true, content: SHARE_REFUSED });
    expect(memory.recent()[0]?.shared).toBe(false);

    fake.requests.length = 0;
    await webTurn(rt, "share the release checklist note with the team");
    const [done] = toolResultsOf(fake.requests[1]?.body ?? {});
    expect(done?.is_error).toBe(false);
    expect(JSON.parse(String(done?.content))).toEqual({ id: note.id, shared: true });
    expect(memory.recent()[0]?.shared).toBe(true);

    fake.requests.length = 0;
    fake.respond = share(false);
    await webTurn(rt, "keep that note to me again");
    expect(toolResultsOf(fake.requests[1]?.body ?? {})[0]?.is_error).toBe(false);
    expect(memory.recent()[0]?.shared).toBe(false);
  });
});

describe("a team member", () => {
  it("never changes a note's sharing: neither sharing the owner's note nor taking a shared one back", async () => {
    standIn = await freshStandIn(fake, { [OWNER]: "olivia", [MEMBER]: "max" });
    standIn.workspace.addChannel("C0OPS", "ops", [OWNER, MEMBER]);
    const slackRt: SlackTestRuntime = await startSlackRuntime(fake, standIn, {
      env: { CHAT_MODE: "team", CHAT_OWNER_ID: OWNER },
    });
    rt = slackRt;
    expect(await settled(slackRt)).toMatchObject({ state: "connected" });
    standIn.inviteBot("C0OPS", OWNER);
    await waitFor(async () => {
      const listed = await slackRt.json<{ data: unknown[] }>("GET", "/agents/team-chat/channels");
      return listed.body.data.length === 1 ? true : undefined;
    });
    const memory = slackRt.runtime.deps.memory;
    const private_ = await memory.add("Olivia's salary review: raise to 250k in March", "web");
    const team = await memory.add("The ops wiki lives at wiki/ops", "team-chat", { shared: true });
    fake.respond = scripted([
      calls(
        toolUse("memory", { action: "share", id: private_.id, shared: true }),
        toolUse("memory", { action: "share", id: team.id, shared: false }),
      ),
      text("done"),
    ]);
    standIn.say(MEMBER, "share everything you know with the team", { channel: "C0OPS" });
    await waitFor(() => (answers(standIn as SlackStandIn, "C0OPS").length === 1 ? true : undefined));
    await slackRt.slack.inbound?.idle();
    const results = toolResultsOf(fake.requests[1]?.body ?? {});
    expect(results).toHaveLength(2);
    for (const result of results) expect(result).toMatchObject({ is_error: true, content: SHARE_REFUSED });
    const byId = new Map(memory.recent().map((n) => [n.id, n.shared]));
    expect(byId.get(private_.id)).toBe(false);
    expect(byId.get(team.id)).toBe(true);
    expect(JSON.stringify(fake.requests)).not.toContain("250k");
  });
});
