// What tartan says when a command or a tool fails (the CLI, the MCP server): for a file the system could not open (ENOENT, EACCES, …) the
// path and what was wrong in words, instead of Node's raw "ENOENT: no such file or directory, stat '…'".

const WHY: Record<string, string> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EISDIR: "is a directory, not a file",
  ENOTDIR: "a part of the path is not a directory",
};

/** `path: what was wrong` for a file-system error, else the error's message. */
export function failureMessage(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e instanceof Error && typeof e.path === "string" && e.code !== undefined && WHY[e.code]) return `${e.path}: ${WHY[e.code]}`;
  return err instanceof Error ? err.message : String(err);
}
