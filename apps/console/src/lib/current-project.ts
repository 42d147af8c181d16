/**
 * The project a person is working in, per organization: the last one a project page showed
 * (a sandbox list, a project picked on Connections, Credentials, Inference...). Pages that pick a
 * project start from it, so moving between them keeps the same project.
 */
const KEY = "agentplane.project.";

export function rememberProject(orgId: string, projectId: string): void {
  try {
    localStorage.setItem(KEY + orgId, projectId);
  } catch {
    // Storage full or refused: the pages still work, starting from the organization's first project.
  }
}

export function rememberedProject(orgId: string): string | undefined {
  try {
    return localStorage.getItem(KEY + orgId) ?? undefined;
  } catch {
    return undefined;
  }
}

/**
 * Which project a page shows when the URL names none: the one last worked in while the
 * organization still has it, else the organization's first. Undefined while the list loads.
 */
export function defaultProject(
  projects: { id: string }[] | undefined,
  remembered: string | undefined,
): string | undefined {
  if (!projects) return undefined;
  return (projects.find((p) => p.id === remembered) ?? projects[0])?.id;
}
