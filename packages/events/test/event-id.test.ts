import { describe, expect, it } from "vitest";
import { envelope, eventId } from "../src/index.ts";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const millisOf = (id: string) => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

describe("eventId", () => {
  it("is a UUID version 7 carrying the time it was made", () => {
    const before = Date.now();
    const id = eventId();
    const after = Date.now();
    expect(id).toMatch(UUID_V7);
    expect(millisOf(id)).toBeGreaterThanOrEqual(before);
    expect(millisOf(id)).toBeLessThanOrEqual(after);
    expect(millisOf(eventId(Date.UTC(2030, 0, 1)))).toBe(Date.UTC(2030, 0, 1));
  });

  it("sorts ids of later milliseconds after earlier ones, as text (the keys' collation) and as bytes", () => {
    const start = Date.UTC(2026, 10, 27, 12);
    const ids = Array.from({ length: 300 }, (_, i) => eventId(start + Math.floor(i / 3) * 7));
    const shuffled = [...ids].sort(() => Math.random() - 0.5);
    const byText = [...shuffled].sort();
    const byMillis = byText.map(millisOf);
    expect(byMillis).toEqual([...byMillis].sort((a, b) => a - b));
    expect(new Set(byText.map(millisOf)).size).toBe(100);
    // Crossing a carry in the hex digits (…fff → …1000) keeps the order.
    expect(eventId(0xfff) < eventId(0x1000)).toBe(true);
  });

  it("draws different ids in the same millisecond", () => {
    const ids = Array.from({ length: 10_000 }, () => eventId(1_700_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids.slice(0, 50)) expect(id).toMatch(UUID_V7);
  });

  it("is what an envelope gets unless the producer names its id", () => {
    expect(envelope("thing.done", {}).id).toMatch(UUID_V7);
    expect(envelope("thing.done", {}, { id: "given" }).id).toBe("given");
  });
});
