import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, hashedEmbedding, startFakeModel } from "./support/fake-model.ts";
import { capturingLogger, startTestRuntime, type TestRuntime, tempHome } from "./support/runtime.ts";
import { calls, scripted, text, toolResultsOf, toolUse } from "./support/script.ts";

let fake: FakeModel;
let rt: TestRuntime | undefined;

beforeAll(async () => {
  fake = await startFakeModel();
});
afterAll(() => fake.close());
afterEach(async () => {
  await rt?.close();
  rt = undefined;
  fake.embed = hashedEmbedding;
  fake.embeddingStatus = undefined;
});

/** Meaning, not words: each concept is a dimension, so "feline" is near "kitten" without sharing a word. */
const CONCEPTS: Record<string, string[]> = {
  animal: ["cat", "cats", "kitten", "kittens", "feline", "shelter", "vet"],
  finance: ["budget", "quarterly", "donation", "money", "spending"],
  ops: ["deploy", "pipeline", "database", "migration", "outage"],
};
function conceptEmbedding(input: string): number[] {
  const v = new Array<number>(1024).fill(0);
  const words = input.toLowerCase().match(/[a-z]+/g) ?? [];
  Object.values(CONCEPTS).forEach((list, i) => {
    v[i] = words.filter((w) => list.includes(w)).length;
  });
  v[1023] = 0.05;
  const norm = Math.sqrt(v.reduce((a, x) => a + x * x, 0));
  return v.map((x) => x / norm);
}

const CORPUS = [
  "The cat sleeps on the sofa all afternoon",
  "Quarterly budget review moved to Friday",
  "Kittens need vaccinations at eight weeks",
  "Budget for the cat shelter donation",
  "The deploy pipeline failed on the database migration",
];

async function seeded(options: { vectorExtension?: boolean } = {}) {
  fake.embed = conceptEmbedding;
  rt = await startTestRuntime(fake, { runtimeOptions: { vectorExtension: options.vectorExtension ?? true } });
  const memory = rt.runtime.deps.memory;
  for (const note of CORPUS) await memory.add(note, "test");
  expect(memory.pendingCount()).toBe(0);
  return memory;
}

describe("hybrid memory search", () => {
  for (const vectorExtension of [true, false]) {
    it(`ranks a fixed corpus by words and meaning (${vectorExtension ? "sqlite-vec" : "in-process cosine"})`, async () => {
      const memory = await seeded({ vectorExtension });
      expect(memory.vectorExtension).toBe(vectorExtension);
      // No shared word: found by meaning only.
      const feline = await memory.search("feline health", 3);
      expect(feline.slice(0, 3).map((h) => h.text)).toEqual(
        [
          "Kittens need vaccinations at eight weeks",
          "The cat sleeps on the sofa all afternoon",
          "Budget for the cat shelter donation",
        ].sort((a, b) => feline.findIndex((h) => h.text === a) - feline.findIndex((h) => h.text === b)),
      );
      expect(feline.every((h) => h.textScore === 0 && (h.vectorScore ?? 0) > 0.5)).toBe(true);
      // Words and meaning together: the note with both wins.
      const both = await memory.search("cat budget", 5);
      expect(both[0]?.text).toBe("Budget for the cat shelter donation");
      expect(both[0]?.textScore).toBe(1);
      // Equal scores: the newer note first.
      await memory.add("The cat sleeps on the sofa all afternoon", "test");
      const tie = await memory.search("sofa afternoon", 2);
      expect(tie[0]?.score).toBeCloseTo(tie[1]?.score ?? 0, 6);
      expect(String(tie[0]?.createdAt) >= String(tie[1]?.createdAt)).toBe(true);
      expect(String(tie[0]?.id) > String(tie[1]?.id)).toBe(true);
    });
  }

  it("is the agent's memory tool", async () => {
    await seeded();
    fake.respond = scripted([
      calls(toolUse("memory", { action: "remember", text: "The owner prefers short answers" })),
      calls(toolUse("memory", { action: "search", query: "database outage", limit: 1 })),
      text("noted"),
    ]);
    const before = fake.requests.length;
    const threads = await rt?.json<{ items: Array<{ id: string; main: boolean }> }>("GET", "/agents/threads");
    const main = threads?.body.items.find((t) => t.main)?.id;
    await rt?.json("POST", `/agents/threads/${main}/messages?stream=false`, { text: "remember that" });
    const results = fake.requests.slice(before).flatMap((q) => toolResultsOf(q.body));
    expect(JSON.parse(results[0]?.content ?? "{}")).toMatchObject({
      text: "The owner prefers short answers",
      source: "web",
    });
    expect(JSON.parse(results[1]?.content ?? "{}").hits.map((h: { text: string }) => h.text)).toEqual([
      "The deploy pipeline failed on the database migration",
    ]);
  });
});

describe("embeddings", () => {
  it("fail open: notes are stored and searched by text, then embedded once the endpoint works", async () => {
    const { logger, records } = capturingLogger();
    rt = await startTestRuntime(fake, { logger });
    const memory = rt.runtime.deps.memory;
    fake.embeddingStatus = 500;
    const note = await memory.add("Rotate the staging TLS certificate in March", "test");
    expect(note.id).toMatch(/^mem_/);
    expect(memory.pendingCount()).toBe(1);
    const hits = await memory.search("certificate", 5);
    expect(hits.map((h) => [h.text, h.vectorScore])).toEqual([["Rotate the staging TLS certificate in March", null]]);
    expect(records.some((r) => r.msg === "embedding failed; notes stay text-searchable")).toBe(true);
    expect(records.some((r) => r.msg === "query embedding failed; searching text only")).toBe(true);
    fake.embeddingStatus = undefined;
    await memory.embedPending();
    expect(memory.pendingCount()).toBe(0);
    expect((await memory.search("certificate", 1))[0]?.vectorScore).toBeGreaterThan(0.3);
    // cloud-b: the Azure client's deployment path, 1024 dimensions, the default API version.
    const call = fake.embeddingRequests.at(-1);
    expect(call?.path).toMatch(/^\/openai\/deployments\/text-embedding-3-small\/embeddings\?api-version=2024-10-21$/);
    expect(call?.body).toMatchObject({ dimensions: 1024 });
    expect(call?.headers["api-key"]).toBe("test-key");
  });

  it("a note the model refuses alone is left text-only, and the notes after it are still embedded", async () => {
    const { logger, records } = capturingLogger();
    rt = await startTestRuntime(fake, { logger });
    const memory = rt.runtime.deps.memory;
    // An embedding endpoint that refuses one input (too many tokens, say) and embeds the others.
    fake.embed = (input) => {
      if (input.includes("POISON")) throw new Error("input too long");
      return hashedEmbedding(input);
    };
    await memory.add(`POISON ${"\u0007".repeat(50)}`, "test");
    await memory.add("Rotate the staging TLS certificate in March", "test");
    await memory.add("The budget review moved to Friday", "test");
    await memory.embedPending();
    expect(memory.pendingCount()).toBe(0);
    expect((await memory.search("certificate", 1))[0]?.vectorScore).toBeGreaterThan(0.3);
    expect((await memory.search("budget", 1))[0]?.vectorScore).toBeGreaterThan(0.3);
    // The refused note is still found by its words, and not sent again on every pass.
    expect((await memory.search("poison", 1))[0]?.text).toContain("POISON");
    const sent = fake.embeddingRequests.length;
    await memory.add("One more note about kittens", "test");
    expect(memory.pendingCount()).toBe(0);
    expect(JSON.stringify(fake.embeddingRequests.slice(sent).map((r) => r.body))).not.toContain("POISON");
    expect(records.some((r) => r.msg === "the embedding model refused notes; they stay text-searchable")).toBe(true);
  });

  it("CLOUD_B_EMBEDDING_MODEL_ID='' skips embeddings entirely", async () => {
    rt = await startTestRuntime(fake, { env: { CLOUD_B_EMBEDDING_MODEL_ID: "" } });
    const before = fake.embeddingRequests.length;
    const memory = rt.runtime.deps.memory;
    await memory.add("Standup moves to 9:30", "test");
    expect(await memory.search("standup", 3)).toMatchObject([{ text: "Standup moves to 9:30", vectorScore: null }]);
    expect(memory.enabled).toBe(false);
    expect(memory.pendingCount()).toBe(0);
    expect(fake.embeddingRequests.length).toBe(before);
  });

  it("re-embeds every note after an embedding model change, text-only until done", async () => {
    const home = tempHome();
    rt = await startTestRuntime(fake, { home });
    for (const n of ["alpha note", "beta note", "gamma note"]) await rt.runtime.deps.memory.add(n, "test");
    await rt.close();
    fake.embeddingStatus = 503;
    rt = await startTestRuntime(fake, { home, env: { CLOUD_B_EMBEDDING_MODEL_ID: "embed-large-1024" } });
    const memory = rt.runtime.deps.memory;
    expect(memory.reembedding).toBe(true);
    expect(memory.pendingCount()).toBe(3);
    expect((await memory.search("alpha", 1))[0]?.vectorScore).toBeNull();
    fake.embeddingStatus = undefined;
    await memory.embedPending();
    expect(memory.reembedding).toBe(false);
    expect(fake.embeddingRequests.at(-1)?.path).toContain("/deployments/embed-large-1024/");
    const models = rt.runtime.deps.database.sqlite
      .prepare("select distinct embedding_model as m from memory_note")
      .all();
    expect(models).toEqual([{ m: "embed-large-1024" }]);
  });

  it("cloud-a embeds through the runtime's invoke path; gateway mode through the gateway", async () => {
    rt = await startTestRuntime(fake, {
      env: { LLM_PROVIDER: "cloud-a", CLOUD_A_BEARER_TOKEN: "bedrock-token", CLOUD_A_ENDPOINT_URL: fake.url },
    });
    await rt.runtime.deps.memory.add("a note for cloud-a", "test");
    const bedrock = fake.embeddingRequests.at(-1);
    expect(decodeURIComponent(bedrock?.path ?? "")).toBe("/model/amazon.titan-embed-text-v2:0/invoke");
    expect(bedrock?.body).toEqual({ inputText: "a note for cloud-a", dimensions: 1024, normalize: true });
    expect(bedrock?.headers.authorization).toBe("Bearer bedrock-token");
    await rt.close();
    rt = await startTestRuntime(fake, { env: { GATEWAY_API_URL: fake.url, GATEWAY_API_TOKEN: "apl_token" } });
    await rt.runtime.deps.memory.add("a note through the gateway", "test");
    const gateway = fake.embeddingRequests.at(-1);
    expect(gateway?.path).toMatch(
      /^\/v1\/llm\/cloud-b\/family-1\/openai\/deployments\/text-embedding-3-small\/embeddings\?/,
    );
    expect(gateway?.headers["api-key"]).toBe("apl_token");
  });
});
