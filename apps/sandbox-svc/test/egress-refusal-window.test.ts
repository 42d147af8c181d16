import { describe, expect, it } from "vitest";
import { RefusalWindow } from "../src/egress/refusal-window.ts";

type Summary = { repeats: number; windowSeconds: number } | undefined;

describe("egress refusal window", () => {
  const recorder = () => {
    const written: [string, Summary][] = [];
    return { written, write: (key: string) => async (s?: Summary) => void written.push([key, s]) };
  };

  it("summarises a key pushed out of the LRU with its counted repeats, and open windows on flush", async () => {
    const { written, write } = recorder();
    const window = new RefusalWindow({ windowMs: 60_000, max: 2 });
    for (let i = 0; i < 5; i++) await window.refused("a", write("a"));
    await window.refused("b", write("b"));
    await window.refused("b", write("b"));
    expect(written).toEqual([
      ["a", undefined],
      ["b", undefined],
    ]);
    // A third key evicts the least recent ("a"): its 4 repeats are written then, not lost.
    await window.refused("c", write("c"));
    await new Promise((r) => setImmediate(r));
    expect(written.slice(2)).toEqual([
      ["a", { repeats: 4, windowSeconds: 60 }],
      ["c", undefined],
    ]);
    await window.flush();
    // "b" had one repeat; "c" none, so nothing more for it.
    expect(written.slice(4)).toEqual([["b", { repeats: 1, windowSeconds: 60 }]]);
    // After the flush a key starts a new window and is recorded at once.
    await window.refused("a", write("a"));
    expect(written.at(-1)).toEqual(["a", undefined]);
    await window.flush();
  });
});
