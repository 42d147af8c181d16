import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { describeLimits, UnenforcedLimitsMarker, UnenforcedLimitsWarning } from "../src/components/sandbox-limits.tsx";

const REASON = "cgroups unavailable on this host (no writable cgroup hierarchy); the local driver does not limit disk";

describe("the limits of a sandbox", () => {
  it("names each limit asked for with its amount, or that there is none", () => {
    expect(describeLimits({ maxProcesses: 64, cpuMillicores: 500, diskMiB: 256, memoryMiB: 64 })).toBe(
      "CPU: 500 millicores, Memory: 64 MiB, Disk: 256 MiB, Processes: at most 64",
    );
    expect(describeLimits({})).toBe("none set");
  });

  it("warns, as a named status, of each limit that does not hold and why", () => {
    const html = renderToStaticMarkup(
      <UnenforcedLimitsWarning
        sandbox={{
          resources: { memoryMiB: 64, diskMiB: 256, cpuMillicores: 500 },
          unenforcedLimits: { resources: ["memoryMiB", "diskMiB"], reason: REASON },
        }}
      />,
    );
    expect(html).toMatch(
      /^<div role="status" aria-labelledby="([^"]+)"[^>]*><p id="\1"[^>]*>Some limits are not enforced on this host<\/p>/,
    );
    expect(html).toContain("<li>Memory: 64 MiB</li><li>Disk: 256 MiB</li></ul>");
    expect(html).not.toContain("CPU");
    expect(html).toContain(`<p>Why: ${REASON}</p>`);
    const one = renderToStaticMarkup(
      <UnenforcedLimitsWarning
        sandbox={{ resources: { diskMiB: 16 }, unenforcedLimits: { resources: ["diskMiB"], reason: "disk" } }}
      />,
    );
    expect(one).toContain(">A limit is not enforced on this host</p>");
  });

  it("says nothing when every limit holds", () => {
    expect(renderToStaticMarkup(<UnenforcedLimitsWarning sandbox={{ resources: { memoryMiB: 64 } }} />)).toBe("");
    expect(renderToStaticMarkup(<UnenforcedLimitsMarker unenforced={undefined} />)).toBe("");
  });

  it("marks a row of the list with a disclosure naming the limits, which opens to the reason", () => {
    const html = renderToStaticMarkup(
      <UnenforcedLimitsMarker unenforced={{ resources: ["cpuMillicores", "maxProcesses"], reason: REASON }} />,
    );
    expect(html).toMatch(/^<details[^>]*><summary[^>]*>Limits not enforced: CPU, processes<\/summary><p[^>]*>/);
    expect(html).toContain(`${REASON}</p></details>`);
  });
});
