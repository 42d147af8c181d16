import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { ExposedPorts } from "../src/components/exposed-ports.tsx";

describe("the exposed ports of a sandbox", () => {
  it("links each port to the address the API returned, with a copy button naming the port", () => {
    const html = renderToStaticMarkup(
      <ExposedPorts
        ports={[
          { port: 8080, visibility: "public", url: "https://8080-web.sbx.example.com" },
          { port: 9000, visibility: "private", url: "https://9000-web.sbx.example.com" },
        ]}
      />,
    );
    expect(html).toContain('aria-label="Exposed ports"');
    expect(html).toContain('<a href="https://8080-web.sbx.example.com"');
    expect(html).toContain(">https://9000-web.sbx.example.com</a>");
    expect(html).toMatch(/Copy<span class="sr-only"> the address of port 9000<\/span>/);
  });

  it("says there is no ingress host instead of an address when the API has none", () => {
    const html = renderToStaticMarkup(<ExposedPorts ports={[{ port: 8080, visibility: "public", url: null }]} />);
    expect(html).toContain("no ingress host configured");
    expect(html).not.toContain("<a ");
    expect(html).not.toContain("Copy");
  });

  it("says so when nothing is exposed", () => {
    expect(renderToStaticMarkup(<ExposedPorts ports={[]} />)).toContain("No ports exposed.");
  });
});
