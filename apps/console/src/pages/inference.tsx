import { useQuery } from "@tanstack/react-query";
import { useParams } from "react-router";
import { call } from "../api/client.ts";
import { useProjectRole } from "../api/hooks.ts";
import { ProjectPicker, useChosenProject } from "../components/project-picker.tsx";
import { ErrorNote, Loading, PageTitle, Table, Td } from "../components/ui.tsx";
import { allows } from "../lib/permissions.ts";

const SOURCE: Record<string, string> = {
  installation: "The installation's environment",
  "project-credential": "A project credential",
  none: "None needed",
};

/** The model providers a project can use, and where each one's credential comes from. */
export default function InferencePage() {
  const { orgId } = useParams() as { orgId: string };
  const { projectId, choose } = useChosenProject(orgId);
  const role = useProjectRole(projectId);
  const read = allows("llm:invoke", role);
  const providers = useQuery({
    queryKey: ["inference-providers", projectId],
    queryFn: () => call("listInferenceProviders", { query: { projectId: projectId! } }),
    enabled: !!projectId && read.allowed,
  });
  return (
    <>
      <PageTitle>Inference</PageTitle>
      <ProjectPicker orgId={orgId} projectId={projectId} onChange={choose} />
      {projectId && role.project && !read.allowed ? (
        <p className="text-sm" role="note">
          {read.reason}
        </p>
      ) : null}
      {providers.isLoading ? <Loading what="providers" /> : null}
      <ErrorNote error={providers.error} retry={() => void providers.refetch()} />
      {providers.data ? (
        <Table
          label="Model providers"
          headers={["Provider", "Usable", "Credential from", "Auth", "Endpoint", "Families", "Regions"]}
        >
          {providers.data.items.map((p) => (
            <tr key={p.name}>
              <Td mono>{p.name}</Td>
              <Td>
                <span data-testid={`usable-${p.name}`}>{p.usable ? "yes" : "no"}</span>
                {p.reason ? <span className="block text-xs text-slate-600 dark:text-slate-300">{p.reason}</span> : null}
              </Td>
              <Td>
                {p.credentialSource === "none" && !p.usable
                  ? "None configured"
                  : (SOURCE[p.credentialSource] ?? p.credentialSource)}
                {p.credentialId ? <span className="block font-mono text-xs">{p.credentialId}</span> : null}
              </Td>
              <Td>{p.authMode}</Td>
              <Td mono>{p.endpointHost}</Td>
              <Td>{p.families.join(", ") || "—"}</Td>
              <Td>{p.regions.join(", ") || "—"}</Td>
            </tr>
          ))}
        </Table>
      ) : null}
      <p className="mt-3 text-sm text-slate-700 dark:text-slate-300">
        Credentials never leave the platform: an installation credential is read from its environment, a project
        credential from governance (Policies → credentials) when the request is proxied.
      </p>
    </>
  );
}
