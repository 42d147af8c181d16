import { describe, expect, it } from "vitest";
import { ProblemError } from "../src/index.ts";

const answer = (status: number, body: unknown) =>
  ProblemError.fromResponse(
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } }),
  );

describe("ProblemError.fromResponse", () => {
  it("takes a provider's own error message as the detail, keeping its body as it came", async () => {
    const anthropic = { type: "error", error: { type: "invalid_request_error", message: "max_tokens: required" } };
    const cases: [unknown, string][] = [
      [anthropic, "max_tokens: required"],
      [{ error: { message: "The model does not exist", code: "model_not_found" } }, "The model does not exist"],
      [
        { message: "The security token included in the request is invalid." },
        "The security token included in the request is invalid.",
      ],
      [{ Message: "Malformed input request" }, "Malformed input request"],
      [{ error: "no such route" }, "no such route"],
    ];
    for (const [body, detail] of cases) {
      const error = await answer(400, body);
      expect(error.detail).toBe(detail);
      expect(error.message).toBe(`HTTP 400: ${detail}`);
      expect(error.body).toEqual(body);
    }
  });

  it("leaves a problem's own title and detail alone", async () => {
    const problem = { title: "Not Found", status: 404, detail: "Project prj_x was not found", message: "other" };
    expect((await answer(404, problem)).message).toBe("Not Found: Project prj_x was not found");
    expect((await answer(409, { title: "Conflict", message: "ignored" })).detail).toBeUndefined();
    expect((await answer(500, { unrelated: true })).message).toBe("HTTP 500");
  });
});
