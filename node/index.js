// SPDX-License-Identifier: Apache-2.0
// cordon for Node: a thin layer over the `cordon` command line (README.md says why not an
// addon). Every call builds an argument vector and starts `cordon` with child_process
// (never a shell); nothing is parsed out of the command's own output.
'use strict';

const childProcess = require('node:child_process');
const fs = require('node:fs');
const fsp = require('node:fs/promises');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');

const net = require('node:net');

// The fast path: libcordon's sessions in this process (src/cordon_node.c, built by
// build.js at install). Without it, or with CORDON_NODE_ADDON=0, the command line.
let addon = null;
if (process.env.CORDON_NODE_ADDON !== '0') {
  try {
    addon = require('./build/cordon.node');
  } catch {
    addon = null;
  }
}

// cordon's own exit statuses (the CLI's "Exit status" table, doc/cordon.1)
const EXIT_TIMEOUT = 124;
const EXIT_SETUP = 125;
const EXIT_NOEXEC = 126;
const EXIT_NOTFOUND = 127;

/** cordon could not do what was asked: bad options, a setup stage that failed, no such
 *  session. The command did not run (or, for a session, did not start). */
class CordonError extends Error {
  constructor(message, { stage = null, status = null, stderr = '' } = {}) {
    super(message);
    this.name = 'CordonError';
    this.stage = stage;
    this.status = status;
    this.stderr = stderr;
  }
}

function cordonBinary(opts) {
  return (opts && opts.cordon) || process.env.CORDON || 'cordon';
}

function strList(v, what) {
  if (v === undefined || v === null) return [];
  const list = Array.isArray(v) ? v : [v];
  for (const s of list) {
    if (typeof s !== 'string' || s === '' || s.includes('\0'))
      throw new TypeError(`cordon: ${what} takes non-empty strings without NUL, got ${JSON.stringify(s)}`);
  }
  return list;
}

function envArgs(env, flag) {
  const out = [];
  if (!env) return out;
  for (const [k, v] of Object.entries(env)) {
    if (k === '' || k.includes('=') || k.includes('\0') || String(v).includes('\0'))
      throw new TypeError(`cordon: env: bad variable ${JSON.stringify(k)} (a name without '=' or NUL)`);
    out.push(flag, `${k}=${v}`);
  }
  return out;
}

function seconds(v, what) {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0)
    throw new TypeError(`cordon: ${what} is a number of seconds > 0, got ${JSON.stringify(v)}`);
  return String(v);
}

// The policy part of `cordon run` / `cordon session start`: one flag per option.
function policyArgs(p = {}) {
  const a = [];
  const one = (flag, v) => {
    if (v !== undefined && v !== null) a.push(flag, String(v));
  };
  const many = (flag, v, what) => {
    for (const s of strList(v, what)) a.push(flag, s);
  };
  const bool = (flag, v) => {
    if (v) a.push(flag);
  };
  if (p.workspace === null) a.push('--no-workspace');
  else one('--workspace', p.workspace);
  one('--base', p.base);
  one('--isolation', p.isolation);
  many('--allow', p.allow, 'allow');
  many('--allow-ro', p.allowRo, 'allowRo');
  many('--deny', p.deny, 'deny');
  many('--hide', p.hide, 'hide');
  many('--deny-glob', p.denyGlob, 'denyGlob');
  many('--protect', p.protect, 'protect');
  bool('--read-only', p.readOnly);
  many('--settings', p.settings, 'settings');
  bool('--strict-settings', p.strictSettings);
  one('--data-root', p.dataRoot);
  one('--network', p.network);
  many('--allow-domain', p.allowDomains, 'allowDomains');
  many('--deny-domain', p.denyDomains, 'denyDomains');
  many('--add-host', p.addHosts, 'addHosts');
  many('--dns-server', p.dnsServers, 'dnsServers');
  bool('--allow-unix-sockets', p.allowUnixSockets);
  many('--allow-socket', p.allowSockets, 'allowSockets');
  for (const port of p.forwardPorts || []) a.push('--forward-port', String(port));
  for (const port of p.publishPorts || []) a.push('--publish-port', String(port));
  one('--network-log', p.networkLog);
  a.push(...envArgs(p.env, '--env'));
  many('--keep-env', p.keepEnv, 'keepEnv');
  bool('--clear-env', p.clearEnv);
  if (p.proc === false) a.push('--no-proc');
  bool('--no-nested', p.noNested);
  bool('--toolchains', p.toolchains);
  const limits = p.limits || {};
  one('--limit-pids', limits.pids);
  one('--limit-memory', limits.memory);
  one('--limit-cpu', limits.cpu);
  return a;
}

function signalName(n) {
  for (const [name, num] of Object.entries(os.constants.signals)) if (num === n) return name;
  return null;
}

// The result of a command from cordon's exit status, as a shell reads it (128+N: signal N).
function resultFromStatus(status, timedOut) {
  const r = { status, exitCode: status, signal: null, timedOut: !!timedOut };
  if (!timedOut && status > 128 && status < 128 + 65) {
    r.exitCode = null;
    r.signal = signalName(status - 128);
  }
  return r;
}

function cordonMessage(stderr) {
  const lines = stderr.split('\n').filter((l) => l.startsWith('cordon: ') && !l.startsWith('cordon: warning: '));
  return lines.length ? lines.join('\n') : stderr.trim() || 'cordon failed before the command could start';
}

/**
 * A command running in a sandbox, shaped like child_process.ChildProcess: `stdin`,
 * `stdout`, `stderr` are Node streams (async iterables of Buffers) when piped;
 * `wait()` resolves to the result once the command exited and its output was read.
 */
class CordonProcess {
  constructor(bin, args, opts, finish) {
    const stdio = [
      opts.stdin === 'inherit' ? 'inherit' : opts.stdin === 'pipe' || opts.input !== undefined ? 'pipe' : 'ignore',
      opts.stdout === 'inherit' ? 'inherit' : 'pipe',
      opts.stderr === 'inherit' ? 'inherit' : 'pipe',
    ];
    this._finish = finish;
    this._aborted = false;
    this._child = childProcess.spawn(bin, args, { stdio, windowsHide: true });
    this.stdin = this._child.stdin;
    this.stdout = this._child.stdout;
    this.stderr = this._child.stderr;
    this.pid = this._child.pid;
    this._exit = new Promise((resolve, reject) => {
      this._child.once('error', (e) =>
        reject(
          e.code === 'ENOENT'
            ? new CordonError(`cordon: ${bin} not found: install cordon, or set CORDON or the cordon option to its path`)
            : e,
        ),
      );
      this._child.once('close', (code, sig) => resolve({ code, sig }));
    });
    if (opts.input !== undefined && this.stdin) {
      this.stdin.on('error', () => {}); // a command that does not read its input
      this.stdin.end(opts.input);
    }
    if (opts.signal) {
      const onAbort = () => this.abort();
      if (opts.signal.aborted) onAbort();
      else {
        opts.signal.addEventListener('abort', onAbort, { once: true });
        this._exit.finally(() => opts.signal.removeEventListener('abort', onAbort)).catch(() => {});
      }
    }
  }

  /** Send a signal to cordon, which passes it on to the command (SIGKILL ends the sandbox). */
  kill(sig = 'SIGTERM') {
    return this._child.kill(sig);
  }

  /** End the command and everything it started (what an AbortSignal does). */
  abort() {
    this._aborted = true;
    this._child.kill('SIGKILL');
  }

  /** The result: { status, exitCode, signal, timedOut, aborted }. */
  async wait() {
    const { code, sig } = await this._exit;
    const status = code === null ? 128 + (os.constants.signals[sig] || 0) : code;
    const r = await this._finish(status);
    r.aborted = this._aborted;
    return r;
  }
}

// Run to completion, collecting the output (or merging it, in order of arrival).
async function collect(proc, opts) {
  const enc = opts.encoding === undefined ? 'utf8' : opts.encoding;
  const out = [];
  const err = [];
  // 'data' and 'end' rather than an async iterator: a few event-loop turns less per
  // command, which is most of what the package adds to a short one (bench/bindings.sh)
  const pump = (stream, sink) =>
    stream
      ? new Promise((resolve, reject) => {
          stream.on('data', (chunk) => sink.push(chunk));
          stream.once('end', resolve);
          stream.once('error', reject);
        })
      : undefined;
  const merged = !!opts.mergeStderr;
  await Promise.all([pump(proc.stdout, out), pump(proc.stderr, merged ? out : err), proc._exit]);
  let r;
  try {
    r = await proc.wait();
  } catch (e) {
    if (e instanceof CordonError && !e.stderr) {
      e.stderr = Buffer.concat(merged ? out : err).toString('utf8');
      if (e.stage === 'usage') e.message = cordonMessage(e.stderr);
    }
    throw e;
  }
  const dec = (b) => (enc === 'buffer' || enc === null ? Buffer.concat(b) : Buffer.concat(b).toString(enc));
  r.stdout = dec(out);
  r.stderr = merged ? dec([]) : dec(err);
  return r;
}

function checkArgv(argv) {
  if (!Array.isArray(argv) || argv.length === 0) throw new TypeError('cordon: the command is a non-empty array of strings');
  strList(argv, 'the command');
  return argv;
}

/**
 * Start one command in a sandbox of its own (`cordon run`). Options: the policy (see
 * index.d.ts) plus cwd, timeout, stdin/stdout/stderr ('pipe' | 'inherit'), input, signal.
 */
function spawn(argv, opts = {}) {
  return spawnRun(['run'], argv, opts, typeof opts.workspace === 'string' ? opts.workspace : undefined);
}

// `cordon run` or `cordon workspace run NAME`: PREFIX, the policy, the run's settings
function spawnRun(prefix, argv, opts, defaultCwd) {
  checkArgv(argv);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cordon-node-'));
  const statusFile = path.join(dir, 'status.json');
  const args = [...prefix, ...policyArgs(opts), '--status-json', statusFile, '--no-tty'];
  // the working directory: asked for, else the workspace, else cordon's (the caller's)
  const cwd = opts.cwd !== undefined ? opts.cwd : defaultCwd;
  if (cwd !== undefined) args.push('--chdir', cwd);
  const t = seconds(opts.timeout, 'timeout');
  if (t) args.push('--timeout', t);
  args.push('--', ...argv);
  const proc = new CordonProcess(cordonBinary(opts), args, opts, async (status) => {
    let st = null;
    try {
      st = JSON.parse(await fsp.readFile(statusFile, 'utf8'));
    } catch {
      // no status: cordon refused its arguments before it could write one
    }
    await fsp.rm(dir, { recursive: true, force: true });
    if (status === EXIT_SETUP && (!st || !st.started)) {
      throw new CordonError(st && st.error ? `cordon: ${st.error}` : 'cordon refused its arguments (exit 125)', {
        stage: st ? st.stage : 'usage',
        status,
      });
    }
    const r = resultFromStatus(status, st ? st.timed_out : false);
    if (st) {
      r.signal = st.signal ? signalName(st.signal) : null;
      r.exitCode = st.status;
      r.wallSeconds = st.wall_seconds;
      r.refusals = st.refusals || [];
    }
    return r;
  });
  proc._exit.catch(() => fs.rmSync(dir, { recursive: true, force: true }));
  return proc;
}

/** Run one command in a sandbox of its own and collect its output. */
function run(argv, opts = {}) {
  return collect(spawn(argv, { ...opts, stdout: 'pipe', stderr: 'pipe' }), opts);
}

// A policy of libcordon's from the same options as policyArgs (the fast path).
function addonPolicy(p) {
  const pol = addon.policyNew();
  const set = (name, v) => {
    try {
      addon.policySet(pol, name, v);
    } catch (e) {
      if (e instanceof TypeError) throw e;
      throw new CordonError(e.message, { stage: e.stage || null, status: EXIT_SETUP });
    }
  };
  const each = (name, v, what) => {
    for (const s of strList(v, what)) set(name, s);
  };
  each('settings', p.settings, 'settings');
  if (p.workspace !== undefined) set('workspace', p.workspace === null ? null : String(p.workspace));
  for (const k of ['base', 'isolation', 'dataRoot', 'network', 'networkLog'])
    if (p[k] !== undefined && p[k] !== null) set(k, String(p[k]));
  for (const k of ['allow', 'allowRo', 'deny', 'hide', 'denyGlob', 'protect', 'allowDomains', 'denyDomains', 'addHosts', 'dnsServers', 'allowSockets', 'keepEnv'])
    each(k, p[k], k);
  for (const k of ['forwardPorts', 'publishPorts']) for (const port of p[k] || []) set(k, String(port));
  const env = envArgs(p.env, '--env');
  for (let i = 1; i < env.length; i += 2) set('env', env[i]);
  for (const k of ['readOnly', 'strictSettings', 'allowUnixSockets', 'clearEnv']) if (p[k]) set(k, true);
  if (p.proc === false) set('proc', false);
  if (p.noNested) set('nested', false);
  if (p.toolchains) set('toolchains', true);
  const limits = p.limits || {};
  if (limits.pids !== undefined) set('limitPids', String(limits.pids));
  if (limits.memory !== undefined) set('limitMemory', String(limits.memory));
  if (limits.cpu !== undefined) set('limitCpu', String(limits.cpu));
  const t = seconds(p.timeout, 'timeout');
  if (t) set('timeout', t);
  const cwd = p.cwd !== undefined ? p.cwd : typeof p.workspace === 'string' ? p.workspace : undefined;
  if (cwd !== undefined) set('cwd', cwd);
  return pol;
}

const SPAWN_STDIN_PIPE = 0x1;
const SPAWN_STDOUT_PIPE = 0x2;
const SPAWN_STDERR_PIPE = 0x4;
const SPAWN_MERGE_STDERR = 0x8;
const SPAWN_STDIN_INHERIT = 0x10;

/** A session command through the fast path; the same interface as CordonProcess. */
class AddonProcess {
  constructor(session, argv, opts) {
    let flags = 0;
    const input = opts.input !== undefined;
    if (opts.stdin === 'pipe' || input) flags |= SPAWN_STDIN_PIPE;
    else if (opts.stdin === 'inherit') flags |= SPAWN_STDIN_INHERIT;
    if (opts.stdout !== 'inherit') flags |= SPAWN_STDOUT_PIPE;
    // merged in the pipe itself: in the order the command wrote them
    if (opts.mergeStderr && opts.stdout !== 'inherit') flags |= SPAWN_MERGE_STDERR;
    else if (opts.stderr !== 'inherit') flags |= SPAWN_STDERR_PIPE;
    const env = opts.env ? envArgs(opts.env, '--env').filter((_, i) => i % 2 === 1) : null;
    const t = seconds(opts.timeout, 'timeout');
    this._timeout = t !== null;
    this._aborted = false;
    let done;
    this._result = new Promise((resolve) => (done = resolve));
    let r;
    try {
      // collect: the addon reads stdout and stderr itself, into one Buffer each (what
      // Session.run wants: no stream machinery per command)
      r = addon.spawn(session, argv, opts.cwd === undefined ? null : opts.cwd, env, t === null ? undefined : Number(t), !!opts.keep, flags, !!opts.collect, (err, res, out, errOut) =>
        done({ err, res, out, errOut }),
      );
    } catch (e) {
      if (e instanceof TypeError) throw e;
      throw new CordonError(e.message, { stage: e.stage || 'session', status: EXIT_SETUP });
    }
    this._proc = r[0];
    const sock = (fd, readable) => (fd >= 0 ? new net.Socket({ fd, readable, writable: !readable }) : null);
    this.stdin = sock(r[1], false);
    this.stdout = sock(r[2], true);
    this.stderr = sock(r[3], true);
    this.pid = undefined;
    const closed = (st) =>
      st
        ? new Promise((res) => {
            st.once('end', res);
            st.once('close', res);
          })
        : Promise.resolve();
    // the end of the command and of its output, as child_process's 'close'
    this._exit = Promise.all([this._result, closed(this.stdout), closed(this.stderr)]);
    if (input && this.stdin) {
      this.stdin.on('error', () => {});
      this.stdin.end(opts.input);
    }
    if (opts.signal) {
      const onAbort = () => this.abort();
      if (opts.signal.aborted) onAbort();
      else {
        opts.signal.addEventListener('abort', onAbort, { once: true });
        this._result.finally(() => opts.signal.removeEventListener('abort', onAbort));
      }
    }
  }

  kill(sig = 'SIGTERM') {
    return addon.kill(this._proc, typeof sig === 'number' ? sig : os.constants.signals[sig]);
  }

  abort() {
    this._aborted = true;
    addon.kill(this._proc, os.constants.signals.SIGKILL);
  }

  async wait() {
    if (this.stdin && !this.stdin.destroyed) this.stdin.end();
    const { err, res, out, errOut } = await this._result;
    this.collected = { stdout: out, stderr: errOut };
    if (err) throw new CordonError(err.message, { stage: err.stage || 'session', status: res ? res.exitCode : EXIT_SETUP });
    return {
      status: res.exitCode,
      exitCode: res.statusCode >= 0 ? res.statusCode : null,
      signal: res.signal ? signalName(res.signal) : null,
      timedOut: res.timedOut,
      aborted: this._aborted,
      wallSeconds: res.wallSeconds,
      refusals: res.refusals,
    };
  }
}

/**
 * One sandbox, built once, that many commands run in (`cordon session`): what a harness
 * uses for an agent's commands. Start with `await Session.start(policy)`; end with
 * `await session.stop()` (or `await using`).
 */
class Session {
  constructor(name, bin, workspace, handle = null) {
    this.name = name;
    this._bin = bin;
    this._workspace = workspace;
    this._stopped = false;
    this._handle = handle;
  }

  /** 'library': in this process (the fast path); 'cli': `cordon session`, by name. */
  get backend() {
    return this._handle ? 'library' : 'cli';
  }

  static async start(opts = {}) {
    // the fast path, unless a published session is asked for (a name, an idle timeout:
    // one that outlives this process) or the binary is chosen
    if (addon && !opts.name && opts.idleTimeout === undefined && !opts.cordon) {
      const pol = addonPolicy(opts);
      let handle;
      try {
        handle = addon.sessionNew(pol);
      } catch (e) {
        throw new CordonError(e.message, { stage: e.stage || null, status: EXIT_SETUP });
      }
      return new Session(null, null, typeof opts.workspace === 'string' ? opts.workspace : undefined, handle);
    }
    const name = opts.name || `node-${process.pid}-${crypto.randomBytes(6).toString('hex')}`;
    const bin = cordonBinary(opts);
    const args = ['session', 'start', name, ...policyArgs(opts)];
    const cwd = opts.cwd !== undefined ? opts.cwd : typeof opts.workspace === 'string' ? opts.workspace : undefined;
    if (cwd !== undefined) args.push('--chdir', cwd);
    const idle = seconds(opts.idleTimeout, 'idleTimeout');
    if (idle) args.push('--idle-timeout', idle);
    const t = seconds(opts.timeout, 'timeout');
    if (t) args.push('--timeout', t);
    const r = await collect(new CordonProcess(bin, args, {}, async (status) => ({ status })), {});
    if (r.status !== 0)
      throw new CordonError(cordonMessage(r.stderr), { stage: null, status: r.status, stderr: r.stderr });
    return new Session(name, bin, typeof opts.workspace === 'string' ? opts.workspace : undefined);
  }

  /** Start a command in the session; its streams as with spawn(). */
  spawn(argv, opts = {}) {
    checkArgv(argv);
    if (this._stopped) throw new CordonError(`cordon: session ${this.name || '(in this process)'} was stopped`, { stage: 'session', status: EXIT_SETUP });
    if (this._handle) return new AddonProcess(this._handle, argv, opts);
    const args = ['session', 'exec', this.name, '--no-tty'];
    const cwd = opts.cwd !== undefined ? opts.cwd : this._workspace;
    if (cwd !== undefined) args.push('--chdir', cwd);
    args.push(...envArgs(opts.env, '--env'));
    const t = seconds(opts.timeout, 'timeout');
    if (t) args.push('--timeout', t);
    if (opts.keep) args.push('--keep');
    args.push('--', ...argv);
    return new CordonProcess(this._bin, args, opts, async (status) => resultFromStatus(status, t !== null && status === EXIT_TIMEOUT));
  }

  /** Run a command in the session and collect its output. */
  async run(argv, opts = {}) {
    if (this._handle && !this._stopped) {
      checkArgv(argv);
      const p = new AddonProcess(this._handle, argv, { ...opts, stdout: 'pipe', stderr: 'pipe', collect: true });
      const r = await p.wait();
      const enc = opts.encoding === undefined ? 'utf8' : opts.encoding;
      const dec = (b) => (enc === 'buffer' || enc === null ? b || Buffer.alloc(0) : (b || Buffer.alloc(0)).toString(enc));
      r.stdout = dec(p.collected.stdout);
      r.stderr = dec(p.collected.stderr);
      return r;
    }
    const r = await collect(this.spawn(argv, { ...opts, stdout: 'pipe', stderr: 'pipe' }), opts);
    // 125 with cordon's own message: the session is gone or its policy cannot be met now
    const text = typeof r.stderr === 'string' ? r.stderr : r.stderr.toString('utf8');
    if (r.status === EXIT_SETUP && /^cordon: (?!warning: )/m.test(text))
      throw new CordonError(cordonMessage(text), { stage: 'session', status: r.status, stderr: text });
    return r;
  }

  /** End the session: every process in it, its mounts, its socket. */
  async stop() {
    if (this._stopped) return;
    this._stopped = true;
    if (this._handle) {
      addon.sessionFree(this._handle);
      return;
    }
    const r = await collect(new CordonProcess(this._bin, ['session', 'stop', this.name], {}, async (status) => ({ status })), {});
    if (r.status !== 0) throw new CordonError(cordonMessage(r.stderr), { status: r.status, stderr: r.stderr });
  }

  async [Symbol.for('nodejs.asyncDispose')]() {
    await this.stop();
  }
}
if (Symbol.asyncDispose) Session.prototype[Symbol.asyncDispose] = Session.prototype[Symbol.for('nodejs.asyncDispose')];

/** The sessions of this user, as `cordon session list --json` gives them. */
async function listSessions(opts = {}) {
  const r = await collect(new CordonProcess(cordonBinary(opts), ['session', 'list', '--json'], {}, async (status) => ({ status })), {});
  if (r.status !== 0) throw new CordonError(cordonMessage(r.stderr), { status: r.status, stderr: r.stderr });
  return JSON.parse(r.stdout);
}

// ---- workspaces (`cordon workspace`) ---------------------------------------------------
// Through the command line, with or without the fast path: creating one copies or
// mounts, integrating one writes the source and commits, each of which can take long,
// and in a child process they never block the event loop.

// A path as `cordon workspace diff --name-status` prints it: git's quoting (a name with a
// '"', a '\\' or a byte that is not printable UTF-8 inside double quotes with C escapes)
function unquotePath(q) {
  if (!q.startsWith('"') || !q.endsWith('"') || q.length < 2) return q;
  const bytes = [];
  const body = Buffer.from(q.slice(1, -1), 'utf8');
  const esc = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== 92 || i + 1 >= body.length) {
      bytes.push(c);
      continue;
    }
    const n = String.fromCharCode(body[i + 1]);
    if (/[0-7]/.test(n) && i + 3 < body.length) {
      bytes.push(parseInt(body.subarray(i + 1, i + 4).toString('latin1'), 8) & 0xff);
      i += 3;
    } else {
      bytes.push(n in esc ? esc[n] : body[i + 1]);
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function wsName(name) {
  if (typeof name !== 'string' || name === '' || name.includes('\0'))
    throw new TypeError(`cordon: a workspace name is a non-empty string, got ${JSON.stringify(name)}`);
  return name;
}

// Run `cordon workspace ARGS...` to its end: { status, stdout, stderr }; a CordonError on
// exit 125 (or any status not in OK)
async function workspaceCli(bin, args, ok = [0]) {
  const r = await collect(new CordonProcess(bin, ['workspace', ...args], {}, async (status) => ({ status })), {});
  if (!ok.includes(r.status)) throw new CordonError(cordonMessage(r.stderr), { stage: 'workspace', status: r.status, stderr: r.stderr });
  return r;
}

function rootArgs(root) {
  if (root === undefined || root === null) return [];
  if (typeof root !== 'string' || root === '') throw new TypeError('cordon: root is a directory (a non-empty string)');
  return ['--root', root];
}

/**
 * A copy-on-write workspace (`cordon workspace`, doc/guide-workspaces.md): a writable
 * view of a directory whose changes land in a private layer; the directory is written
 * only by integrate(). Make one with `await Workspace.create(name, { source })`, or
 * take an existing one with `await Workspace.open(name)`.
 */
class Workspace {
  constructor(name, info, opts) {
    this.name = name;
    this.backend = info.backend;
    this.source = info.source;
    this._root = opts.root;
    this._bin = cordonBinary(opts);
  }

  static async create(name, opts = {}) {
    wsName(name);
    if (typeof opts.source !== 'string' || opts.source === '') throw new TypeError('cordon: Workspace.create needs source: the directory to work on');
    const args = ['create', name, '--source', opts.source, ...rootArgs(opts.root)];
    if (opts.backend !== undefined) args.push('--backend', String(opts.backend));
    for (const f of strList(opts.settings, 'settings')) args.push('--settings', f);
    await workspaceCli(cordonBinary(opts), args);
    return Workspace.open(name, opts);
  }

  static async open(name, opts = {}) {
    wsName(name);
    const w = new Workspace(name, {}, opts);
    const st = await w.status();
    w.backend = st.backend;
    w.source = st.source;
    return w;
  }

  /** What `cordon workspace status` says: backend, source, state, view, changes, status... */
  async status() {
    const r = await workspaceCli(this._bin, ['status', this.name, ...rootArgs(this._root)]);
    const st = {};
    for (const line of r.stdout.split('\n')) {
      const m = /^(\S+(?: \S+)?)\s{2,}(.*)$/.exec(line);
      if (m) st[m[1].replace(/ (\w)/g, (_, c) => c.toUpperCase())] = m[2];
    }
    if (st.changes !== undefined && /^\d+$/.test(st.changes)) st.changes = Number(st.changes);
    return st;
  }

  /** Start a command in the workspace's view (`cordon workspace run`); as spawn(). */
  spawn(argv, opts = {}) {
    if (opts.workspace !== undefined) throw new TypeError('cordon: a workspace run takes no workspace option (the workspace is its view)');
    return spawnRun(['workspace', 'run', this.name, ...rootArgs(this._root)], argv, { ...opts, cordon: this._bin }, this.source);
  }

  /** Run a command in the workspace's view and collect its output; as run(). */
  run(argv, opts = {}) {
    return collect(this.spawn(argv, { ...opts, stdout: 'pipe', stderr: 'pipe' }), opts);
  }

  /** The changes against the source as a unified diff (`git apply` takes it). */
  async diff() {
    return (await workspaceCli(this._bin, ['diff', this.name, ...rootArgs(this._root)])).stdout;
  }

  /** The changes: [{ status: 'A' | 'M' | 'D', path }], paths relative to the source. */
  async changes() {
    const r = await workspaceCli(this._bin, ['diff', this.name, '--name-status', ...rootArgs(this._root)]);
    return r.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        const tab = l.indexOf('\t');
        return { status: l.slice(0, tab), path: unquotePath(l.slice(tab + 1)) };
      });
  }

  /**
   * Write the changes into the source (and, in a git repository, make one commit).
   * Resolves to { integrated: true, message } or, for a worktree whose merge conflicts,
   * { integrated: false, message } with the source unchanged; a file of the source's
   * changed since is refused (a CordonError) unless force.
   */
  async integrate(opts = {}) {
    const args = ['integrate', this.name, ...rootArgs(this._root)];
    if (opts.message !== undefined) args.push('-m', String(opts.message));
    if (opts.force) args.push('--force');
    const r = await workspaceCli(this._bin, args, [0, 1]);
    return { integrated: r.status === 0, message: (r.stdout + r.stderr).trim() };
  }

  /** Discard the workspace: unmount, delete its layers and its state (the source stays). */
  async remove() {
    await workspaceCli(this._bin, ['remove', this.name, ...rootArgs(this._root)]);
  }
}
Workspace.prototype.discard = Workspace.prototype.remove;

/** The workspaces: [{ name, backend, source }] (`cordon workspace list`). */
async function listWorkspaces(opts = {}) {
  const r = await workspaceCli(cordonBinary(opts), ['list', ...rootArgs(opts.root)]);
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [name, backend, ...rest] = l.split('\t');
      return { name, backend, source: rest.join('\t') };
    });
}

module.exports = {
  /** 'library' when the fast path was built and loads, else 'cli' */
  backend: addon ? 'library' : 'cli',
  run,
  spawn,
  Session,
  listSessions,
  Workspace,
  listWorkspaces,
  CordonError,
  CordonProcess,
  policyArgs,
  EXIT_TIMEOUT,
  EXIT_SETUP,
  EXIT_NOEXEC,
  EXIT_NOTFOUND,
};
