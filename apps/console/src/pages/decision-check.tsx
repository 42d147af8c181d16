import type { components } from "@agentplane/sdk";
import { useMutation } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useParams } from "react-router";
import { call } from "../api/client.ts";
import { useProjectRole } from "../api/hooks.ts";
import { type DecisionPrincipal, PrincipalPicker } from "../components/principal-picker.tsx";
import { ProjectPicker, useChosenProject } from "../components/project-picker.tsx";
import { Button, ErrorNote, Field, Guarded, INPUT, PageTitle, Table, Td, TextField } from "../components/ui.tsx";
import { allows } from "../lib/permissions.ts";
import { ApiError, fieldErrorsOf } from "../lib/problem.ts";

type Action = components["schemas"]["PolicyDecisionQuery"]["action"];

/** The governed actions and the resource type each is usually asked about. */
const ACTIONS: { action: Action; type: string; kind?: string }[] = [
  { action: "sandbox:exec", type: "Sandbox", kind: "sandbox" },
  { action: "sandbox:create", type: "Sandbox", kind: "sandbox" },
  { action: "sandbox:start", type: "Sandbox", kind: "sandbox" },
  { action: "sandbox:update", type: "Sandbox", kind: "sandbox" },
  { action: "sandbox:expose-port", type: "Sandbox", kind: "sandbox" },
  { action: "sandbox:egress", type: "Host", kind: "sandbox" },
  { action: "llm:invoke", type: "Model" },
  { action: "cluster:get", type: "ClusterResource", kind: "cluster" },
  { action: "cluster:create", type: "ClusterResource", kind: "cluster" },
  { action: "cluster:delete", type: "ClusterResource", kind: "cluster" },
  { action: "cluster:exec", type: "ClusterResource", kind: "cluster" },
  { action: "aws:call", type: "AwsService", kind: "aws-connection" },
  { action: "tool:call", type: "Tool", kind: "connector" },
];

/** "Would this be allowed?": asks the decision API what the bound policies answer for you. */
export default function DecisionCheckPage() {
  const { orgId } = useParams() as { orgId: string };
  const { projectId, choose } = useChosenProject(orgId);
  const role = useProjectRole(projectId);
  const ask = allows("project:read", role);
  const askForOthers = allows("project-policies:manage", role);
  const [principal, setPrincipal] = useState<DecisionPrincipal>();
  const [action, setAction] = useState<Action>("sandbox:exec");
  const [resourceId, setResourceId] = useState("");
  const [context, setContext] = useState('{ "argv": ["rm", "-rf", "/tmp/x"] }');
  const [contextError, setContextError] = useState<string>();
  const entry = ACTIONS.find((a) => a.action === action) ?? ACTIONS[0]!;
  const decide = useMutation({
    mutationFn: (parsed: Record<string, unknown>) =>
      call("evaluatePolicyDecision", {
        path: { projectId: projectId! },
        body: {
          action,
          resource: { type: entry.type, id: resourceId, ...(entry.kind ? { kind: entry.kind } : {}) },
          context: parsed,
          ...(principal ? { principal } : {}),
        },
      }),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    let parsed: unknown;
    try {
      parsed = context.trim() ? JSON.parse(context) : {};
    } catch {
      setContextError('Not JSON: write an object such as { "argv": ["ls"] }');
      return;
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
      setContextError("The context is a JSON object");
      return;
    }
    setContextError(undefined);
    decide.mutate(parsed as Record<string, unknown>);
  };
  const fieldError = fieldErrorsOf(decide.error);
  const answer = decide.data;
  return (
    <>
      <PageTitle>Would this be allowed?</PageTitle>
      <p className="mb-3 text-sm text-slate-600 dark:text-slate-300">
        Asks the project's bound policies what they decide for you, or for another member, API token or sandbox of the
        project. Nothing runs and no denial is recorded.
      </p>
      <ProjectPicker orgId={orgId} projectId={projectId} onChange={choose} />
      <form onSubmit={submit} noValidate className="max-w-xl">
        <Guarded allowance={askForOthers}>
          {(disabled) => (
            <PrincipalPicker
              orgId={orgId}
              projectId={projectId}
              value={principal}
              onChange={setPrincipal}
              disabled={disabled}
              error={fieldError("principal/id") ?? fieldError("principal/type")}
            />
          )}
        </Guarded>
        <Field label="Action" error={fieldError("action")}>
          {(p) => (
            <select {...p} className={INPUT} value={action} onChange={(e) => setAction(e.target.value as Action)}>
              {ACTIONS.map((a) => (
                <option key={a.action} value={a.action}>
                  {a.action}
                </option>
              ))}
            </select>
          )}
        </Field>
        <TextField
          label={`${entry.type} id`}
          required
          value={resourceId}
          error={fieldError("resource/id")}
          hint="The resource asked about, e.g. a sandbox id"
          onChange={(e) => setResourceId(e.target.value)}
        />
        <Field label="Context (JSON)" error={contextError ?? fieldError("context")} hint="What the action carries">
          {(p) => (
            <textarea
              {...p}
              rows={4}
              className={`${INPUT} font-mono`}
              value={context}
              onChange={(e) => setContext(e.target.value)}
            />
          )}
        </Field>
        <ErrorNote
          error={decide.error instanceof ApiError && decide.error.problem.errors?.length ? undefined : decide.error}
        />
        <Guarded allowance={ask}>
          {(disabled) => (
            <Button type="submit" variant="primary" disabled={disabled || decide.isPending || !projectId}>
              {decide.isPending ? "Asking…" : "Ask"}
            </Button>
          )}
        </Guarded>
      </form>
      {answer ? (
        <section aria-label="Decision" className="mt-6">
          <p role="status" className="mb-3 text-lg font-semibold">
            {answer.decision === "allow"
              ? "Allowed"
              : answer.enforced
                ? "Denied"
                : "Allowed (only dryrun bindings deny)"}
          </p>
          <p className="mb-3 text-sm">
            Decided for {answer.principal.displayName ?? answer.principal.id} ({answer.principal.type})
          </p>
          {answer.reasons.length ? (
            <Table label="Rules that decided" headers={["Rule", "Policy", "Binding", "Mode"]}>
              {answer.reasons.map((r) => (
                <tr key={`${r.bindingId}-${r.ruleId}`}>
                  <Td mono>
                    {r.ruleId}
                    {r.forbid ? " (forbid)" : ""}
                  </Td>
                  <Td mono>
                    {r.policyId} v{r.version}
                  </Td>
                  <Td mono>{r.bindingId}</Td>
                  <Td>{r.mode}</Td>
                </tr>
              ))}
            </Table>
          ) : (
            <p className="text-sm">
              {answer.policies?.length
                ? `Evaluated against ${answer.policies.length} bound policy version(s).`
                : "No binding reaches this resource and action."}
            </p>
          )}
        </section>
      ) : null}
    </>
  );
}
