import type { SlackStandIn } from "@agentplane/testkit/slack";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { STRANGER_REFUSAL_WINDOW_MS, StrangerRefusals } from "../src/chat/slack/strangers.ts";
import { type FakeModel, startFakeModel } from "./support/fake-model.ts";
import { capturingLogger, waitFor } from "./support/runtime.ts";
import { answers, freshStandIn, type SlackTestRuntime, settled, startSlackRuntime } from "./support/slack.ts";

const OWNER = "U0OWNER";
const STRANGER = "U0STRANGER";
const OTHER = "U0OTHER";

let fake: FakeModel;
let standIn: SlackStandIn;
let rt: SlackTestRuntime | undefined;
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
beforeEach(async () => {
  standIn = await freshStandIn(fake, { [OWNER]: "olivia", [STRANGER]: "sam", [OTHER]: "otto" });
});
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  await standIn.close();
});

const dmOf = (user: string) => standIn.workspace.dm(user).id;

describe("direct messages from strangers in team mode", () => {
  it("refuse each stranger once, and drop the rest of a flood silently (a debug line each)", async () => {
    const { logger, records } = capturingLogger();
    rt = await startSlackRuntime(fake, standIn, { env: { CHAT_MODE: "team", CHAT_OWNER_ID: OWNER }, logger });
    expect(await settled(rt)).toMatchObject({ state: "connected" });
    for (let i = 0; i < 20; i++) standIn.say(STRANGER, `please do thing ${i}`);
    standIn.say(OTHER, "and me?");
    await waitFor(() => (answers(standIn, dmOf(OTHER)).length === 1 ? true : undefined));
    await waitFor(() =>
      records.filter((r) => r.msg?.toString().includes("dropped a stranger's DM")).length === 19 ? true : undefined,
    );
    const refusals = answers(standIn, dmOf(STRANGER));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]?.text).toContain(`<@${OWNER}>`);
    const dropped = records.filter((r) => r.msg?.toString().includes("dropped a stranger's DM"));
    expect(dropped.every((r) => r.level === 20 && r.user === STRANGER)).toBe(true);
    expect(JSON.stringify(dropped)).not.toContain("please do thing");
    expect(fake.requests).toHaveLength(0);
    // The owner is still heard.
    standIn.say(OWNER, "hello");
    await waitFor(() => (answers(standIn, dmOf(OWNER)).length === 1 ? true : undefined));
  });
});

describe("StrangerRefusals", () => {
  it("tells a stranger again once the window has passed", () => {
    let now = 1_000_000;
    const strangers = new StrangerRefusals({ now: () => now });
    expect(strangers.take("U1")).toBe(true);
    expect(strangers.take("U1")).toBe(false);
    now += STRANGER_REFUSAL_WINDOW_MS - 1;
    expect(strangers.take("U1")).toBe(false);
    now += 1;
    expect(strangers.take("U1")).toBe(true);
  });

  it("remembers a bounded number of strangers, forgetting the one refused longest ago", () => {
    const strangers = new StrangerRefusals({ limit: 3 });
    for (const person of ["U1", "U2", "U3", "U4"]) expect(strangers.take(person)).toBe(true);
    expect(strangers.size).toBe(3);
    expect(strangers.take("U4")).toBe(false);
    expect(strangers.take("U1")).toBe(true);
  });
});
