import type { Sandbox } from "../api/types.ts";
import { CopyButton } from "./copy-button.tsx";
import { Table, Td } from "./ui.tsx";

/**
 * A sandbox's exposed ports with the address the ingress serves each at (as the API returns it:
 * `https://<port>-<slug>.<ingress host>`), or why there is none.
 */
export function ExposedPorts({ ports }: { ports: Sandbox["ports"] }) {
  if (!ports.length) return <p className="text-sm">No ports exposed.</p>;
  return (
    <Table label="Exposed ports" headers={["Port", "Visibility", "Address"]}>
      {ports.map((p) => (
        <tr key={p.port}>
          <Td>{p.port}</Td>
          <Td>{p.visibility}</Td>
          <Td mono>
            {p.url ? (
              <span className="inline-flex flex-wrap items-center gap-2">
                <a href={p.url} target="_blank" rel="noreferrer">
                  {p.url}
                </a>
                <CopyButton text={p.url} hint={`the address of port ${p.port}`} />
              </span>
            ) : (
              <span className="text-slate-600 dark:text-slate-300">no ingress host configured</span>
            )}
          </Td>
        </tr>
      ))}
    </Table>
  );
}
