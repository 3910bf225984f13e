// SPDX-License-Identifier: Apache-2.0
/// <reference types="node" />
import type { Readable, Writable } from 'node:stream';

/** What the sandbox shows and allows: the options of `cordon run` (doc/cordon.1). */
export interface Policy {
  /** the writable workspace (default: the current directory); null: none */
  workspace?: string | null;
  base?: 'system' | 'host' | 'empty';
  isolation?: 'namespaces' | 'landlock' | 'auto';
  /** visible and writable */
  allow?: string[];
  /** visible, read-only */
  allowRo?: string[];
  deny?: string[];
  hide?: string[];
  denyGlob?: string[];
  protect?: string[];
  readOnly?: boolean;
  settings?: string | string[];
  strictSettings?: boolean;
  dataRoot?: string;
  network?: 'none' | 'host' | 'proxy';
  allowDomains?: string[];
  denyDomains?: string[];
  addHosts?: string[];
  dnsServers?: string[];
  allowUnixSockets?: boolean;
  allowSockets?: string[];
  forwardPorts?: Array<number | string>;
  publishPorts?: Array<number | string>;
  networkLog?: string;
  /** variables set in the command's environment */
  env?: Record<string, string>;
  keepEnv?: string[];
  clearEnv?: boolean;
  /** false: no /proc */
  proc?: boolean;
  noNested?: boolean;
  /** show the usual per-user tool directories of the home (~/.cargo, ~/.pyenv, ~/.nvm, ...) read-only */
  toolchains?: boolean;
  limits?: { pids?: number; memory?: number | string; cpu?: number };
  /** the cordon binary (default: $CORDON, else `cordon` on PATH) */
  cordon?: string;
}

/** Per command. */
export interface CommandOptions {
  /** the working directory inside (default: the policy's workspace when given, else the
   *  caller's current directory) */
  cwd?: string;
  /** kill the command's whole process tree after this many seconds (status 124) */
  timeout?: number;
  /** abort: the command and all it started are killed; the result says aborted */
  signal?: AbortSignal;
  /** written to the command's stdin, which is then closed */
  input?: string | Uint8Array;
  stdin?: 'pipe' | 'inherit' | 'ignore';
  stdout?: 'pipe' | 'inherit';
  stderr?: 'pipe' | 'inherit';
}

export interface SessionCommandOptions extends CommandOptions {
  /** variables set over the session's environment for this command */
  env?: Record<string, string>;
  /** what the command leaves running stays in the session until stop() */
  keep?: boolean;
}

export interface CollectOptions {
  /** 'utf8' (default), another Buffer encoding, or 'buffer' for Buffers */
  encoding?: BufferEncoding | 'buffer';
  /** stderr into stdout: in a session of the fast path through one pipe, in the order the
   *  command wrote them; otherwise in the order the chunks arrived */
  mergeStderr?: boolean;
}

export interface Result {
  /** the exit status as a shell gives it: the command's code, 128+N for signal N,
   *  124 timed out, 126 not executable, 127 not found */
  status: number;
  /** the command's own exit code; null when a signal ended it */
  exitCode: number | null;
  /** the signal that ended it ('SIGKILL'), or null */
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** run() only: wall time and the refusals cordon counted */
  wallSeconds?: number;
  refusals?: unknown[];
}

export interface Output<T = string> extends Result {
  stdout: T;
  stderr: T;
}

export class CordonError extends Error {
  /** the setup stage that failed ('resolve', 'usage', 'session', ...) or null */
  stage: string | null;
  status: number | null;
  /** cordon's stderr, where it was collected */
  stderr: string;
}

export class CordonProcess {
  readonly pid: number | undefined;
  readonly stdin: Writable | null;
  /** async-iterable: `for await (const chunk of proc.stdout)` */
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  kill(signal?: NodeJS.Signals | number): boolean;
  abort(): void;
  wait(): Promise<Result>;
}

export function spawn(argv: string[], opts?: Policy & CommandOptions): CordonProcess;
export function run(argv: string[], opts?: Policy & CommandOptions & CollectOptions & { encoding?: BufferEncoding }): Promise<Output<string>>;
export function run(argv: string[], opts: Policy & CommandOptions & CollectOptions & { encoding: 'buffer' }): Promise<Output<Buffer>>;

export interface SessionOptions extends Policy {
  /** a name of your own (default: a fresh one) */
  name?: string;
  /** the session's working directory (default: the workspace) */
  cwd?: string;
  /** end the session after this many seconds without a command */
  idleTimeout?: number;
  /** the default timeout of each command, in seconds */
  timeout?: number;
}

export class Session {
  /** the published session's name; null for one in this process */
  readonly name: string | null;
  /** 'library': libcordon's session in this process (the fast path); 'cli': `cordon session` */
  readonly backend: 'library' | 'cli';
  static start(opts?: SessionOptions): Promise<Session>;
  spawn(argv: string[], opts?: SessionCommandOptions): CordonProcess;
  run(argv: string[], opts?: SessionCommandOptions & CollectOptions & { encoding?: BufferEncoding }): Promise<Output<string>>;
  run(argv: string[], opts: SessionCommandOptions & CollectOptions & { encoding: 'buffer' }): Promise<Output<Buffer>>;
  stop(): Promise<void>;
}

export interface WorkspaceOptions {
  /** where workspaces live (default: $XDG_STATE_HOME/cordon/workspaces) */
  root?: string;
  /** the cordon binary (default: $CORDON, else `cordon` on PATH) */
  cordon?: string;
}

export interface WorkspaceCreateOptions extends WorkspaceOptions {
  /** the directory the workspace is a view of */
  source: string;
  /** auto (default: kernel, then fuse, then copy), kernel, fuse, copy, worktree, none */
  backend?: 'auto' | 'kernel' | 'fuse' | 'copy' | 'worktree' | 'none';
  /** settings files (their orchestration.isolation chooses the default backend) */
  settings?: string | string[];
}

export interface WorkspaceChange {
  /** added, modified, deleted */
  status: 'A' | 'M' | 'D';
  /** relative to the source */
  path: string;
}

export interface WorkspaceStatus {
  name: string;
  backend: string;
  source: string;
  /** the workspace's own directory */
  state: string;
  view: string;
  changes?: number;
  inUse?: string;
  status: string;
  [key: string]: string | number | undefined;
}

export interface Integration {
  /** false: a worktree's merge conflicted and nothing was changed */
  integrated: boolean;
  /** what cordon said */
  message: string;
}

/** A copy-on-write workspace (`cordon workspace`): changes land in a private layer until integrate(). */
export class Workspace {
  readonly name: string;
  readonly backend: string;
  /** the source directory, where runs see the view (and their default cwd) */
  readonly source: string;
  static create(name: string, opts: WorkspaceCreateOptions): Promise<Workspace>;
  static open(name: string, opts?: WorkspaceOptions): Promise<Workspace>;
  status(): Promise<WorkspaceStatus>;
  /** a policy without `workspace`: the workspace is the run's view */
  spawn(argv: string[], opts?: Omit<Policy, 'workspace'> & CommandOptions): CordonProcess;
  run(argv: string[], opts?: Omit<Policy, 'workspace'> & CommandOptions & CollectOptions & { encoding?: BufferEncoding }): Promise<Output<string>>;
  run(argv: string[], opts: Omit<Policy, 'workspace'> & CommandOptions & CollectOptions & { encoding: 'buffer' }): Promise<Output<Buffer>>;
  /** a unified diff against the source as it is now */
  diff(): Promise<string>;
  changes(): Promise<WorkspaceChange[]>;
  integrate(opts?: { message?: string; force?: boolean }): Promise<Integration>;
  /** unmount, delete the layers and the state; the source is untouched */
  remove(): Promise<void>;
  /** the same as remove() */
  discard(): Promise<void>;
}

export function listWorkspaces(opts?: WorkspaceOptions): Promise<{ name: string; backend: string; source: string }[]>;

/** 'library' when the fast path (build/cordon.node) was built and loads, else 'cli' */
export const backend: 'library' | 'cli';

export function listSessions(opts?: { cordon?: string }): Promise<unknown[]>;
export function policyArgs(policy?: Policy): string[];

export const EXIT_TIMEOUT: 124;
export const EXIT_SETUP: 125;
export const EXIT_NOEXEC: 126;
export const EXIT_NOTFOUND: 127;
