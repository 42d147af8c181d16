import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, lastUserText, startFakeModel } from "./support/fake-model.ts";
import { fakeModelEnv, tempHome, waitFor } from "./support/runtime.ts";

const MAIN = join(import.meta.dirname, "..", "src", "main.ts");

interface Child {
  process: ChildProcess;
  url: string;
}

/** Starts `src/main.ts` as its own Node process (the deployable) on a free port. */
async function spawnRuntime(env: Record<string, string>): Promise<Child> {
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH ?? "", ...env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += String(d);
  });
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = "";
    child.stdout?.on("data", (d) => {
      buffered += String(d);
      const match = /"url":"(http:\/\/[^"]+)"/.exec(buffered);
      if (match?.[1]) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`runtime exited with ${code}: ${stderr}`)));
  });
  return { process: child, url };
}

function killHard(child: Child): Promise<void> {
  return new Promise((resolve) => {
    child.process.once("exit", () => resolve());
    child.process.kill("SIGKILL");
  });
}

async function call(url: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as Record<string, unknown> };
}

type Run = { id: string; status: string; attempts: number; error: string | null };
async function runs(url: string, name: string): Promise<Run[]> {
  return (await call(url, "GET", `/agents/webhook-subscriptions/${name}/runs?limit=200`)).body.items as Run[];
}

async function webTexts(url: string): Promise<string[]> {
  const threads = (await call(url, "GET", "/agents/threads")).body.items as Array<{ id: string; main: boolean }>;
  const main = threads.find((t) => t.main)?.id;
  const messages = (await call(url, "GET", `/agents/threads/${main}/messages`)).body.items as Array<{ text: string }>;
  return messages.map((m) => m.text);
}

let fake: FakeModel;
const children: Child[] = [];
beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(async () => {
  for (const child of children) if (child.process.exitCode === null) child.process.kill("SIGKILL");
  await fake.close();
});

describe("kill -9 durability", () => {
  it("every accepted run ends delivered or failed after a SIGKILL with runs queued and running", async () => {
    const home = tempHome();
    const env = fakeModelEnv(fake, home);
    let slow = true;
    fake.respond = async (body) => {
      await new Promise((r) => setTimeout(r, slow ? 250 : 5));
      return { content: [{ type: "text", text: `answer to ${lastUserText(body)}` }] };
    };
    const first = await spawnRuntime(env);
    children.push(first);
    await call(first.url, "PUT", "/agents/webhooks/enabled", { enabled: true });
    const names = ["alpha", "beta", "gamma"];
    for (const name of names) {
      await call(first.url, "POST", "/agents/webhook-subscriptions", {
        name,
        deliverTo: "Chat",
        prompt: `${name} {n}`,
      });
    }
    const accepted: string[] = [];
    for (const name of names) {
      const answers = await Promise.all(
        Array.from({ length: 11 }, (_, n) => call(first.url, "POST", `/agents/webhooks/${name}`, { n })),
      );
      for (const a of answers) {
        expect(a.status).toBe(202);
        accepted.push(String(a.body.runId));
      }
    }
    expect(accepted).toHaveLength(33);
    // Let a few runs finish so the kill hits delivered, running and queued runs at once.
    await waitFor(async () => (await runs(first.url, "alpha")).some((r) => r.status === "delivered") || undefined);
    await killHard(first);

    slow = false;
    const second = await spawnRuntime(env);
    children.push(second);
    const final = await waitFor(async () => {
      const all = (await Promise.all(names.map((n) => runs(second.url, n)))).flat();
      return all.every((r) => r.status === "delivered" || r.status === "failed") ? all : undefined;
    }, 20_000);
    expect(final.map((r) => r.id).sort()).toEqual([...accepted].sort());
    expect(final.some((r) => r.attempts === 2)).toBe(true);
    // Each accepted run left exactly one labelled message (answer or failure notice).
    const texts = await webTexts(second.url);
    expect(texts.filter((t) => t.startsWith("**Webhook: ")).length).toBeGreaterThanOrEqual(33);
    for (const name of names) {
      for (let n = 0; n < 11; n++) {
        expect(texts.some((t) => t.endsWith(`answer to ${name} ${n}`))).toBe(true);
      }
    }
    second.process.kill("SIGTERM");
  }, 60_000);

  it("a run interrupted twice fails with a notice instead of looping", async () => {
    const home = tempHome();
    const env = fakeModelEnv(fake, home);
    fake.respond = () => new Promise(() => {});
    const first = await spawnRuntime(env);
    children.push(first);
    await call(first.url, "PUT", "/agents/webhooks/enabled", { enabled: true });
    await call(first.url, "POST", "/agents/webhook-subscriptions", { name: "stuck", deliverTo: "Chat" });
    const { body } = await call(first.url, "POST", "/agents/webhooks/stuck", { event_type: "ping" });
    const runId = String(body.runId);
    await waitFor(async () => (await runs(first.url, "stuck"))[0]?.status === "running" || undefined);
    await killHard(first);

    const second = await spawnRuntime(env);
    children.push(second);
    await waitFor(async () => {
      const [run] = await runs(second.url, "stuck");
      return (run?.status === "running" && run.attempts === 2) || undefined;
    });
    await killHard(second);

    const third = await spawnRuntime(env);
    children.push(third);
    const [run] = await runs(third.url, "stuck");
    expect(run).toMatchObject({ id: runId, status: "failed", attempts: 2 });
    const texts = await waitFor(async () => {
      const t = await webTexts(third.url);
      return t.length > 0 ? t : undefined;
    });
    expect(texts[0]).toMatch(/^\*\*Webhook: stuck\*\*\n\nThe run for event `ping` failed: interrupted/);
    third.process.kill("SIGTERM");
  }, 60_000);
});
