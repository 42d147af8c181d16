import { describe, expect, it } from "vitest";
import { safeNext, serverPageAfterSignIn, signInPath } from "../src/lib/sign-in-path.ts";

describe("the return path after signing in", () => {
  it("keeps plain paths of this app, with their query and fragment", () => {
    expect(safeNext("/projects/p1/sandboxes?page=2#top")).toBe("/projects/p1/sandboxes?page=2#top");
    expect(safeNext("/device?user_code=ABCD-EFGH")).toBe("/device?user_code=ABCD-EFGH");
    expect(safeNext("/")).toBe("/");
  });

  it("sends anything else to /", () => {
    for (const next of [
      null,
      "",
      "projects",
      "https://evil.example/",
      "//evil.example/",
      "/\\evil.example/",
      "/\\/evil.example/",
      "/projects\\..\\x",
      "/\t/evil.example/",
      "/\n/evil.example/",
      "/\r/evil.example",
      "/a\u0000b",
      "/a\u007fb",
      `/${"a".repeat(2001)}`,
    ]) {
      expect(safeNext(next), JSON.stringify(next)).toBe("/");
    }
  });

  it("round-trips through the sign-in link", () => {
    const next = "/projects/p1?tab=keys";
    const query = new URL(signInPath(next), "https://console.example").searchParams.get("next");
    expect(safeNext(query)).toBe(next);
  });

  it("loads a server page by its path alone: a code in a sign-in link is not carried to approval", () => {
    expect(serverPageAfterSignIn("/device?code=BCDF-GHJK")).toBe("/device");
    expect(serverPageAfterSignIn("/device")).toBe("/device");
    expect(serverPageAfterSignIn("/activate?code=BCDF-GHJK#x")).toBe("/activate");
    expect(serverPageAfterSignIn("/devices")).toBeUndefined();
    expect(serverPageAfterSignIn("/projects/p1?tab=keys")).toBeUndefined();
  });
});
