#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The git oracle (issue 19, section 5; doc/security.md, "The git oracle").

A stateful fuzzer for the creation control that does not know the attacks. It builds a
workspace on the host (a main repository, a nested one, a linked worktree, a submodule, an
"evil" directory inside and another outside whose `config` sets core.fsmonitor and
core.hooksPath), asks the host's git in every directory what it would execute and read,
runs a random sequence of name-making, renaming, linking, mode-changing and namespace
calls inside `cordon run` (default options, the workspace as the current directory), asks
git again, and fails on any difference that could make a host git run a program or read
a configuration the command chose.

  git_oracle.py fuzz --cordon BIN --dir DIR [--seconds S] [--seeds SPEC,...] [--control N]
                     [--keep-going] [--max-findings N] [--label WORD]
  git_oracle.py replay --cordon BIN --dir DIR SPEC     (one entry, with its control)
  git_oracle.py minimize --cordon BIN --dir DIR SPEC   (the calls of it that matter)
  git_oracle.py gen SPEC                              (print its sequence)
  git_oracle.py setup DIR | snapshot WS OUT | diff BEFORE AFTER   (the pieces)
  git_oracle.py drive WS EVIL SEED|JSON               (what runs inside the sandbox)

SPEC is a seed, or SEED@I+J+... for only those calls of the seed's sequence (what
`minimize` prints; the regression entries of tests/escape/test_gitoracle.sh).

A sequence is a pure function of its seed (the generator never looks at the file
system), so a seed printed by a failure replays the same calls anywhere; every call's
result (ok or the errno's name) is printed beside it.
"""
import ctypes
import errno
import hashlib
import json
import os
import random
import shutil
import socket
import stat
import subprocess
import sys
import time

GIT_NAMES = ['.git', 'HEAD', 'objects', 'refs', 'commondir', 'gitdir', 'config',
             'config.worktree', 'hooks', 'hooks/pre-commit', 'info', 'worktrees',
             'packed-refs']
AGENT_NAMES = ['.codex', '.agents', '.claude', '.mcp.json', '.vscode', '.idea',
               '.gitmodules', '.cordon']
OTHER_NAMES = ['x', 'tmp', 'objects.real', 'refs.real', 'HEAD.real', 'config.real',
               'hooks.real', 'pre-commit', 'fsmonitor']
ALL_NAMES = GIT_NAMES + AGENT_NAMES + OTHER_NAMES

# The workspace's directories the generator knows (relative to the workspace), git
# directories first; directories a sequence makes are added as it goes.
GIT_DIRS = ['.git', 'nested/.git', '.git/modules/sub', '.git/worktrees/wt', 'evil']
WORK_DIRS = ['.', 'nested', 'sub', 'wt', 'src', '.git/hooks', 'nested/.git/hooks',
             '.git/modules/sub/hooks', '.git/refs', '.git/objects', 'nested/.git/objects',
             'nested/.git/refs', '.git/info', '.git/worktrees', 'evil/hooks',
             '.git/modules']

OPS = ['mkdir', 'write', 'write', 'append', 'symlink', 'link', 'rename', 'rename_noreplace',
       'rename_exchange', 'rename_whiteout', 'mkfifo', 'bind', 'tmpfile', 'chmod',
       'truncate', 'utime', 'setxattr', 'opath_write', 'ns_write', 'move_aside',
       'exchange_symlink', 'remove']

# ------------------------------------------------------------------------------------
# the generator: a seed -> a list of operations (tuples of strings and ints)


def gen(seed):
    rng = random.Random(seed)
    dirs_git = list(GIT_DIRS)
    dirs_all = GIT_DIRS + WORK_DIRS
    # a focus: a few directories and names the sequence mostly works on, so that the
    # steps of a route (move a thing aside, then write what was refused) meet
    focus_dirs = rng.sample(dirs_git, rng.randint(1, 2)) + rng.sample(dirs_all, rng.randint(0, 2))
    focus_names = rng.sample(GIT_NAMES, rng.randint(2, 5)) + rng.sample(AGENT_NAMES + OTHER_NAMES, rng.randint(0, 2))
    n = rng.randint(10, 200)
    made = []

    def pick_dir():
        r = rng.random()
        if r < 0.7:
            return rng.choice(focus_dirs)
        if r < 0.85 and made:
            return rng.choice(made)
        return rng.choice(dirs_all)

    def pick_name():
        return rng.choice(focus_names) if rng.random() < 0.75 else rng.choice(ALL_NAMES)

    def pick_path():
        d, nm = pick_dir(), pick_name()
        return nm if d == '.' else d + '/' + nm

    ops = []
    for _ in range(n):
        op = rng.choice(OPS)
        p = pick_path()
        if op == 'mkdir':
            ops.append((op, p))
            made.append(p)
        elif op in ('write', 'append', 'tmpfile', 'opath_write', 'ns_write'):
            ops.append((op, p, rng.choice(contents_for(p)), rng.randint(0, 2)))
        elif op == 'symlink' or op == 'exchange_symlink':
            ops.append((op, rng.choice(targets_for(p)), p))
        elif op == 'link':
            src = rng.choice(['evil/config', 'evil/fsmon', 'evil/hooks/pre-commit', pick_path()])
            ops.append((op, src, p, rng.randint(0, 1)))
        elif op.startswith('rename'):
            q = pick_path() if rng.random() < 0.5 else p.rsplit('/', 1)[0] + '/' + pick_name() if '/' in p else pick_name()
            if rng.random() < 0.5:
                p, q = q, p
            ops.append((op, p, q))
        elif op == 'chmod':
            ops.append((op, p, rng.choice([0o777, 0o755, 0o700, 0o644, 0o666, 0o4755])))
        elif op == 'move_aside':
            ops.append((op, p, rng.choice(['.real', '.x'])))
        else:
            ops.append((op, p))
    return ops


def contents_for(path):
    """What a file of that name holds when an attacker writes it: the format git reads
    there, pointing at one of the evil directories."""
    base = path.rsplit('/', 1)[-1]
    if base in ('config', 'config.worktree', 'config.real'):
        return ['cfg_evil', 'cfg_include', 'junk']
    if base in ('commondir', 'gitdir'):
        return ['path_evil_out', 'path_evil_in', 'path_evil_rel']
    if base == '.git':
        return ['gitfile_out', 'gitfile_in']
    if base in ('HEAD', 'HEAD.real'):
        return ['head']
    if base in ('pre-commit', 'fsmonitor') or '/hooks/' in '/' + path:
        return ['hook']
    if base in AGENT_NAMES:
        return ['agent']
    return ['junk', 'head', 'cfg_evil']


def targets_for(path):
    base = path.rsplit('/', 1)[-1]
    return [base + '.real', base + '.x', '@EVIL_OUT', '@EVIL_OUT/' + base, '@WS/evil',
            '@WS/evil/' + base, '../evil', 'x']


# ------------------------------------------------------------------------------------
# the driver: runs a sequence (inside the sandbox, or on the host for the control)

RENAME_NOREPLACE, RENAME_EXCHANGE, RENAME_WHITEOUT = 1, 2, 4
AT_FDCWD = -100
AT_SYMLINK_FOLLOW = 0x400
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    libc.linkat.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    return libc


def _chk(rc):
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


class Driver:
    def __init__(self, ws, evil_out):
        self.ws = ws
        self.evil_out = evil_out
        self.libc = _libc()

    def content(self, cid):
        eo, ei = self.evil_out, self.ws + '/evil'
        return {
            'cfg_evil': '[core]\n\tfsmonitor = %s/fsmon\n\thooksPath = %s/hooks\n' % (eo, eo),
            'cfg_include': '[include]\n\tpath = %s/config\n' % eo,
            'junk': 'x\n',
            'path_evil_out': eo + '\n',
            'path_evil_in': ei + '\n',
            'path_evil_rel': '../evil\n',
            'gitfile_out': 'gitdir: %s\n' % eo,
            'gitfile_in': 'gitdir: %s\n' % ei,
            'head': 'ref: refs/heads/main\n',
            'hook': '#!/bin/sh\necho ran >%s/ran\n' % eo,
            'agent': '{"command": "%s/fsmon"}\n' % eo,
        }[cid].encode()

    def target(self, t):
        return t.replace('@EVIL_OUT', self.evil_out).replace('@WS', self.ws)

    def write_fd(self, fd, cid):
        try:
            os.write(fd, self.content(cid))
        finally:
            os.close(fd)

    def do(self, op):
        kind, a = op[0], op[1:]
        mode = 0o755 if len(a) > 2 and a[-1] == 2 else 0o644
        if kind == 'mkdir':
            os.mkdir(a[0], 0o755)
        elif kind == 'write':
            self.write_fd(os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK, mode), a[1])
        elif kind == 'append':
            self.write_fd(os.open(a[0], os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK), a[1])
        elif kind == 'symlink':
            os.symlink(self.target(a[0]), a[1])
        elif kind == 'link':
            os.link(a[0], a[1], follow_symlinks=bool(a[2]))
        elif kind.startswith('rename'):
            flags = {'rename': 0, 'rename_noreplace': RENAME_NOREPLACE,
                     'rename_exchange': RENAME_EXCHANGE, 'rename_whiteout': RENAME_WHITEOUT}[kind]
            _chk(self.libc.renameat2(AT_FDCWD, a[0].encode(), AT_FDCWD, a[1].encode(), flags))
        elif kind == 'mkfifo':
            os.mkfifo(a[0], 0o644)
        elif kind == 'bind':
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.bind(a[0])
            finally:
                s.close()
        elif kind == 'tmpfile':
            d = os.path.dirname(a[0]) or '.'
            fd = os.open(d, os.O_TMPFILE | os.O_WRONLY, mode)
            try:
                os.write(fd, self.content(a[1]))
                _chk(self.libc.linkat(AT_FDCWD, ('/proc/self/fd/%d' % fd).encode(), AT_FDCWD,
                                      a[0].encode(), AT_SYMLINK_FOLLOW))
            finally:
                os.close(fd)
        elif kind == 'chmod':
            os.chmod(a[0], a[1])
        elif kind == 'truncate':
            os.truncate(a[0], 0)
        elif kind == 'utime':
            os.utime(a[0], (0, 0))
        elif kind == 'setxattr':
            os.setxattr(a[0], 'user.oracle', b'x')
        elif kind == 'opath_write':
            fd = os.open(a[0], os.O_PATH)
            try:
                self.write_fd(os.open('/proc/self/fd/%d' % fd, os.O_WRONLY | os.O_TRUNC | os.O_NONBLOCK), a[1])
            finally:
                os.close(fd)
        elif kind == 'ns_write':
            self.ns_write(a[0], a[1])
        elif kind == 'move_aside':
            os.rename(a[0], a[0] + a[1])
            os.symlink(os.path.basename(a[0]) + a[1], a[0])
        elif kind == 'exchange_symlink':
            tmp = os.path.join(os.path.dirname(a[1]), '.oracle-tmp')
            os.symlink(self.target(a[0]), tmp)
            _chk(self.libc.renameat2(AT_FDCWD, tmp.encode(), AT_FDCWD, a[1].encode(), RENAME_EXCHANGE))
        elif kind == 'remove':
            if os.path.isdir(a[0]) and not os.path.islink(a[0]):
                os.rmdir(a[0])
            else:
                os.unlink(a[0])
        else:
            raise ValueError(kind)

    def ns_write(self, path, cid):
        """An O_PATH descriptor taken first, then a user and mount namespace of the
        command's own with a tmpfs over the file's directory, then the descriptor
        reopened for writing through /proc/self/fd."""
        uid, gid = os.getuid(), os.getgid()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                os.close(r)
                fd = os.open(path, os.O_PATH)
                _chk(self.libc.unshare(CLONE_NEWUSER | CLONE_NEWNS))
                for f, s in (('setgroups', 'deny'), ('uid_map', '0 %d 1' % uid), ('gid_map', '0 %d 1' % gid)):
                    with open('/proc/self/' + f, 'w') as fh:
                        fh.write(s)
                d = os.path.dirname(os.path.abspath(path))
                _chk(self.libc.mount(b'none', d.encode(), b'tmpfs', 0, None))
                self.write_fd(os.open('/proc/self/fd/%d' % fd, os.O_WRONLY | os.O_TRUNC | os.O_NONBLOCK), cid)
            except OSError as e:
                code = e.errno or 255
            except Exception:
                code = 255
            os.write(w, bytes([code & 255]))
            os._exit(0)
        os.close(w)
        got = os.read(r, 1)
        os.close(r)
        os.waitpid(pid, 0)
        code = got[0] if got else 255
        if code:
            raise OSError(code, os.strerror(code))

    def run(self, ops, out):
        os.chdir(self.ws)
        for i, op in enumerate(ops):
            try:
                self.do(op)
                res = 'ok'
            except OSError as e:
                res = errno.errorcode.get(e.errno, str(e.errno))
            except Exception as e:  # a bug of the driver, never of the sandbox
                res = 'error:' + type(e).__name__
            out.write('%3d %s -> %s\n' % (i, fmt_op(op), res))
            out.flush()  # before the next fork of ns_write, and for a run that hangs


def fmt_op(op):
    return ' '.join(oct(x) if isinstance(x, int) and x > 7 else str(x) for x in op)


# ------------------------------------------------------------------------------------
# the workspace on the host

def sh(args, cwd=None, env=None):
    subprocess.run(args, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.PIPE)


def git_env(home):
    env = {k: v for k, v in os.environ.items() if not k.startswith('GIT_')}
    env.update(HOME=home, XDG_CONFIG_HOME=home + '/.config', GIT_CONFIG_NOSYSTEM='1',
               LC_ALL='C', GIT_OPTIONAL_LOCKS='0',
               GIT_AUTHOR_NAME='o', GIT_AUTHOR_EMAIL='o@example.invalid',
               GIT_COMMITTER_NAME='o', GIT_COMMITTER_EMAIL='o@example.invalid',
               GIT_AUTHOR_DATE='2020-01-01T00:00:00Z', GIT_COMMITTER_DATE='2020-01-01T00:00:00Z')
    return env


def write(path, text, mode=0o644):
    with open(path, 'w') as f:
        f.write(text)
    os.chmod(path, mode)


def make_evil(d, with_head):
    """A directory git takes for a common directory, whose config runs a program."""
    os.makedirs(d + '/objects', exist_ok=True)
    os.makedirs(d + '/refs/heads', exist_ok=True)
    os.makedirs(d + '/hooks', exist_ok=True)
    payload = '#!/bin/sh\necho ran >>%s/ran\n' % d
    write(d + '/fsmon', payload, 0o755)
    write(d + '/hooks/pre-commit', payload, 0o755)
    write(d + '/config', '[core]\n\tfsmonitor = %s/fsmon\n\thooksPath = %s/hooks\n' % (d, d))
    if with_head:
        write(d + '/HEAD', 'ref: refs/heads/main\n')


def setup(top):
    """top/evil (outside the workspace), top/subsrc (the submodule's origin) and
    top/ws: a main repository with a submodule `sub`, a nested repository `nested`, a
    linked worktree `wt`, an in-workspace evil directory `evil` (not a git directory: no
    HEAD), a plain `src`, and two agent names (`.claude/settings.json`, `.mcp.json`)."""
    home = top + '/.githome'
    os.makedirs(home, exist_ok=True)
    env = git_env(home)
    g = ['git', '-c', 'init.defaultBranch=main', '-c', 'protocol.file.allow=always']
    ws = top + '/ws'
    make_evil(top + '/evil', True)
    sh(g + ['init', '-q', top + '/subsrc'], env=env)
    write(top + '/subsrc/lib.txt', 'lib\n')
    sh(g + ['add', 'lib.txt'], cwd=top + '/subsrc', env=env)
    sh(g + ['commit', '-q', '-m', 'lib'], cwd=top + '/subsrc', env=env)
    sh(g + ['init', '-q', ws], env=env)
    os.makedirs(ws + '/src')
    write(ws + '/src/main.c', 'int main(void) { return 0; }\n')
    write(ws + '/file.txt', 'tracked\n')
    sh(g + ['add', 'file.txt', 'src'], cwd=ws, env=env)
    sh(g + ['commit', '-q', '-m', 'init'], cwd=ws, env=env)
    sh(g + ['submodule', '-q', 'add', top + '/subsrc', 'sub'], cwd=ws, env=env)
    sh(g + ['commit', '-q', '-m', 'sub'], cwd=ws, env=env)
    sh(g + ['worktree', 'add', '-q', '-b', 'wtb', 'wt'], cwd=ws, env=env)
    sh(g + ['init', '-q', ws + '/nested'], env=env)
    write(ws + '/nested/n.txt', 'n\n')
    sh(g + ['add', 'n.txt'], cwd=ws + '/nested', env=env)
    sh(g + ['commit', '-q', '-m', 'n'], cwd=ws + '/nested', env=env)
    make_evil(ws + '/evil', False)
    os.makedirs(ws + '/.claude')
    write(ws + '/.claude/settings.json', '{}\n')
    write(ws + '/.mcp.json', '{}\n')
    return ws


# ------------------------------------------------------------------------------------
# the snapshot: what a host git would execute and read, from every directory

def ident(path):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return '%d:%d' % (st.st_dev, st.st_ino)


def sha(path):
    try:
        with open(path, 'rb') as f:
            return hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError as e:
        return 'unreadable:' + errno.errorcode.get(e.errno, '?')


def tree(path):
    """A name's whole content, by type, mode, owner and hash (a directory recursively)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    m = stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return ['link', os.readlink(path)]
    if stat.S_ISDIR(st.st_mode):
        try:
            names = sorted(os.listdir(path))
        except OSError:
            names = ['<unlistable>']
        return ['dir', oct(m), st.st_uid, {n: tree(path + '/' + n) for n in names}]
    if stat.S_ISREG(st.st_mode):
        return ['file', oct(m), st.st_uid, sha(path)]
    return ['special', stat.S_IFMT(st.st_mode), oct(m)]


def hooks_of(hdir):
    out = []
    try:
        names = sorted(os.listdir(hdir))
    except OSError:
        return out
    for n in names:
        p = hdir + '/' + n
        t = tree(p)
        if t and t[0] == 'link':
            t = t + [sha(p)]
        out.append(json.dumps([n, t], sort_keys=True))
    return out


class Hang(Exception):
    pass


def git(args, cwd, env):
    """git's status and output; Hang when it blocks (a FIFO where it reads a file)."""
    try:
        p = subprocess.Popen(['git'] + args, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        return 1, b'', str(e).encode()
    try:
        # a second is plenty for these commands; then look at why it waits
        out, err = p.communicate(timeout=1)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        try:
            with open('/proc/%d/wchan' % p.pid) as f:
                wchan = f.read().strip()
        except OSError:
            wchan = '?'
        if wchan in ('wait_for_partner', 'pipe_read', 'pipe_write'):
            p.kill()
            p.communicate()
            raise Hang('git %s blocks in %s (%s)' % (args[0], cwd, wchan))
        try:  # a loaded machine: wait longer for anything but a FIFO
            out, err = p.communicate(timeout=60)
            return p.returncode, out, err
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            raise Hang('git %s blocks in %s (%s)' % (args[0], cwd, wchan))


def snapshot(ws, home):
    """What git would run and read from every directory of ws. A git that blocks (on a
    FIFO the command made where git reads a file) ends the walk: that is a finding."""
    try:
        return _snapshot(ws, home)
    except Hang as e:
        return {'dirs': {}, 'pairs': {}, 'agents': {}, 'hang': str(e)}


def _snapshot(ws, home):
    env = git_env(home)
    dirs, pairs = {}, {}
    for root, dnames, _ in os.walk(ws):
        dnames.sort()
        rel = os.path.relpath(root, ws)
        did = ident(root)
        rc, out, err = git(['rev-parse', '--absolute-git-dir', '--git-common-dir',
                            '--git-path', 'hooks'], root, env)
        lines = out.decode(errors='replace').splitlines()
        if rc != 0 or len(lines) < 3:
            dirs[did] = {'path': rel, 'map': None,
                         'err': err.decode(errors='replace').strip().splitlines()[-1:]}
            continue
        gd = lines[0]
        cd = os.path.normpath(os.path.join(root, lines[1]))
        hk = os.path.normpath(os.path.join(root, lines[2]))
        key = '%s|%s' % (ident(gd), ident(cd))
        dirs[did] = {'path': rel, 'map': key, 'gitdir': gd, 'own': ident(gd) in (did, ident(root + '/.git'))}
        pr = pairs.get(key)
        if pr is None:
            pr = pairs[key] = {'gitdir': gd, 'commondir': cd, 'config': [], 'hooks': [], 'modes': []}
            rc, out, err = git(['config', '--list', '--show-origin', '--show-scope', '-z'], root, env)
            # -z: scope NUL origin NUL key NL value NUL
            f = out.decode(errors='replace').split('\0')
            for i in range(0, len(f) - 2, 3):
                scope, origin, kv = f[i], f[i + 1], f[i + 2]
                k, _, v = kv.partition('\n')
                osha = ''
                if origin.startswith('file:'):
                    osha = sha(os.path.join(root, origin[5:]))
                pr['config'].append(json.dumps([scope, osha, k, v]))
            if rc != 0:
                pr['config'].append(json.dumps(['error', err.decode(errors='replace').strip()[-200:]]))
            for role, p in (('gitdir', gd), ('commondir', cd)):
                try:
                    st = os.stat(p)
                    pr['modes'].append(json.dumps([role, oct(stat.S_IMODE(st.st_mode)), st.st_uid]))
                except OSError:
                    pass
        for h in hooks_of(hk):
            if h not in pr['hooks']:
                pr['hooks'].append(h)
        try:
            st = os.stat(hk)
            m = json.dumps(['hooks', oct(stat.S_IMODE(st.st_mode)), st.st_uid])
            if m not in pr['modes']:
                pr['modes'].append(m)
        except OSError:
            pass
    agents = {n: tree(ws + '/' + n) for n in AGENT_NAMES}
    return {'dirs': dirs, 'pairs': pairs, 'agents': agents}


def diff(before, after):
    """The findings: every difference that could make a host git run a program or read
    a configuration the command chose."""
    found = []
    if 'hang' in before:
        return ['the snapshot before the run failed: ' + before['hang']]
    if 'hang' in after:
        return ['a host git hangs: ' + after['hang']]
    bp, ap = before['pairs'], after['pairs']

    def desc(key, pairs):
        p = pairs.get(key)
        return '%s (common %s)' % (p['gitdir'], p['commondir']) if p else str(key)

    moved = {}  # (was, now) -> the directories whose mapping changed so
    for did, a in sorted(after['dirs'].items(), key=lambda x: x[1]['path']):
        if a['map'] is None:
            continue
        b = before['dirs'].get(did)
        if b is not None and b['path'] == a['path']:
            if b['map'] != a['map']:
                moved.setdefault((b['map'], a['map']), []).append(a['path'])
        elif a['map'] not in bp:
            what = 'new git directory (discovered in place)' if a.get('own') else 'new mapping'
            found.append('%s: git in %s uses %s' % (what, a['path'], desc(a['map'], ap)))
    for (was, now), paths in sorted(moved.items(), key=lambda x: x[1][0]):
        if now in bp:
            # git there now finds a repository that was one before the run (a nested
            # repository whose marks were removed falls back to its parent's): nothing
            # the command chose, and that repository's files are compared below
            continue
        found.append('mapping changed: git in %s%s now uses %s, was %s' % (
            paths[0], ' (and %d directories below)' % (len(paths) - 1) if len(paths) > 1 else '',
            desc(now, ap), desc(was, bp) if was else 'none'))
    for key, a in sorted(ap.items()):
        b = bp.get(key)
        if b is None:
            for c in a['config']:
                found.append('  config of the new mapping %s: %s' % (a['gitdir'], c))
            for h in a['hooks']:
                found.append('  hook of the new mapping %s: %s' % (a['gitdir'], h))
            continue
        for field, what in (('config', 'config entry'), ('hooks', 'hook'), ('modes', 'mode')):
            for x in a[field]:
                if x not in b[field]:
                    found.append('new %s for %s: %s' % (what, a['gitdir'], x))
    for n in AGENT_NAMES:
        if before['agents'].get(n) != after['agents'].get(n):
            found.append('agent name %s changed: %s -> %s' % (
                n, json.dumps(before['agents'].get(n))[:200], json.dumps(after['agents'].get(n))[:200]))
    return found


# ------------------------------------------------------------------------------------
# the loop

def rmtree(p):
    if not os.path.lexists(p):
        return
    for root, dnames, fnames in os.walk(p):
        for n in dnames:
            q = os.path.join(root, n)
            try:
                if not os.path.islink(q):
                    os.chmod(q, 0o755)
            except OSError:
                pass
    try:
        os.chmod(p, 0o755)
    except OSError:
        pass
    shutil.rmtree(p, ignore_errors=True)


class Fuzz:
    def __init__(self, cordon, top, script, extra):
        self.cordon = cordon
        self.top = top
        with open(script) as f:
            self.source = f.read()
        self.extra = extra
        self.home = top + '/.githome'

    def trial(self, seed, sandbox, ops=None):
        """One sequence (the seed's, or ops) on a fresh workspace: (findings, the
        driver's output, its status)."""
        d = self.top + '/t'
        rmtree(d)
        os.makedirs(d)
        os.chmod(d, 0o755)
        ws = setup(d)
        home = d + '/.githome'
        before = snapshot(ws, home)
        # the driver's source is passed on the command line: the sandbox needs no rule for it
        args = [sys.executable if not sandbox else '/usr/bin/python3', '-c', self.source, 'drive', ws, d + '/evil',
                str(seed) if ops is None else json.dumps(ops)]
        if sandbox:
            args = [self.cordon, 'run'] + self.extra + ['--'] + args
        env = {k: v for k, v in os.environ.items() if not k.startswith('GIT_')}
        try:
            r = subprocess.run(args, cwd=ws, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=60)
            out = r.stdout.decode(errors='replace')
            rc = r.returncode
        except subprocess.TimeoutExpired as e:
            out, rc = (e.stdout or b'').decode(errors='replace'), 'timeout'
        after = snapshot(ws, home)
        found = diff(before, after)
        if sandbox and (rc != 0 or '-> error:' in out):
            found.append('the driver did not run to its end in the sandbox (status %s)' % rc)
        return found, out, rc

    def report(self, spec, found, out, label):
        print('# FINDING %s %s (replay: CORDON_ORACLE_SEEDS=%s CORDON_ORACLE_SECONDS=0, or '
              'git_oracle.py replay --cordon CORDON --dir DIR %s; shrink: git_oracle.py minimize)' % (label, spec, spec, spec))
        for f in found[:40]:
            print('#   ' + f)
        if len(found) > 40:
            print('#   ... %d more' % (len(found) - 40))
        print('# the sequence and what each call returned in the sandbox:')
        for line in out.splitlines():
            print('#   ' + line)
        sys.stdout.flush()


def parse_spec(spec):
    """A regression entry: SEED (its whole sequence) or SEED@I+J+... (only those calls of
    it, as `minimize` prints them) -> (label, ops)."""
    seed, _, pick = spec.partition('@')
    ops = gen(int(seed))
    if pick:
        ops = [ops[int(i)] for i in pick.split('+')]
    return spec, ops


def main_fuzz(argv):
    import argparse
    ap = argparse.ArgumentParser(prog='git_oracle.py fuzz')
    ap.add_argument('--cordon', required=True)
    ap.add_argument('--dir', required=True)
    ap.add_argument('--seconds', type=float, default=60)
    ap.add_argument('--seeds', default='', help='regression entries, SEED or SEED@I+J, run first, all of them')
    ap.add_argument('--control', type=int, default=8,
                    help='how many random seeds to run without cordon too (the first with a difference ends it)')
    ap.add_argument('--no-entry-control', action='store_true',
                    help='run the regression entries without their controls (shown elsewhere)')
    ap.add_argument('--keep-going', action='store_true', help='do not stop at the first failing random seed')
    ap.add_argument('--max-findings', type=int, default=1)
    ap.add_argument('--cordon-arg', action='append', default=[])
    ap.add_argument('--label', default='')
    a = ap.parse_args(argv)
    script = os.path.abspath(__file__)
    fz = Fuzz(os.path.abspath(a.cordon), os.path.abspath(a.dir), script, a.cordon_arg)
    failed = 0
    t0 = time.monotonic()
    label = a.label + ': ' if a.label else ''

    def control(spec, ops):
        """Without cordon the same calls must change what git would run or read, or
        the oracle proves nothing."""
        found, _, _ = fz.trial(None, sandbox=False, ops=ops)
        if found:
            print('# %scontrol: %s without cordon: %d differences (first: %s)' % (label, spec, len(found), found[0]))
        return bool(found)

    def sandboxed(spec, ops, kind):
        found, out, _ = fz.trial(None, sandbox=True, ops=ops)
        if found:
            fz.report(spec, found, out, label + kind)
        sys.stdout.flush()
        return bool(found)

    n = 0
    # the regression entries: every one, each with its control
    for spec in a.seeds.replace(',', ' ').split():
        spec, ops = parse_spec(spec)
        if not a.no_entry_control and not control(spec, ops):
            print('# CONTROL FAILED: %s changed nothing without cordon: the oracle cannot see it' % spec)
            failed += 1
        n += 1
        failed += sandboxed(spec, ops, 'regression seed')
    # random seeds until the budget is spent
    rng = random.Random()
    controls, seen = 0, a.control == 0
    random_failed = 0
    while time.monotonic() - t0 < a.seconds:
        seed = rng.randrange(1, 2**31)
        spec, ops = parse_spec(str(seed))
        if not seen and controls < a.control:
            controls += 1
            seen = control(spec, ops)
        n += 1
        if sandboxed(spec, ops, 'random seed'):
            failed += 1
            random_failed += 1
            if random_failed >= a.max_findings and not a.keep_going:
                break
    # a loaded machine may have spent the budget before a control saw a change: the
    # controls go on (without cordon: quick) until one does, never on a timing
    while not seen and 0 < controls < a.control:
        controls += 1
        seen = control(*parse_spec(str(rng.randrange(1, 2**31))))
    if not seen and controls:
        print('# CONTROL FAILED: none of %d random seeds changed anything without cordon: the oracle cannot see' % controls)
        failed += 1
    print('# %s%d sequences in %.0f s, %d failing' % (label, n, time.monotonic() - t0, failed))
    rmtree(fz.top + '/t')
    return 1 if failed else 0


def main_minimize(argv):
    """The shortest part of a failing seed's sequence that still gives its first finding
    (greedy: drop chunks, halving their size), printed as a regression entry SEED@I+J."""
    import argparse
    ap = argparse.ArgumentParser(prog='git_oracle.py minimize')
    ap.add_argument('--cordon', required=True)
    ap.add_argument('--dir', required=True)
    ap.add_argument('seed')
    a = ap.parse_args(argv)
    fz = Fuzz(os.path.abspath(a.cordon), os.path.abspath(a.dir), os.path.abspath(__file__), [])
    seed = int(a.seed.split('@')[0])
    allops = gen(seed)
    keep = [int(i) for i in a.seed.split('@')[1].split('+')] if '@' in a.seed else list(range(len(allops)))

    def run(idx):
        return fz.trial(None, True, [allops[i] for i in idx])

    found, out, _ = run(keep)
    if not found:
        print('%s finds nothing' % a.seed)
        return 0
    want = found[0]
    print('keeping: ' + want)
    chunk = max(1, len(keep) // 2)
    while True:
        i = 0
        while i < len(keep):
            cand = keep[:i] + keep[i + chunk:]
            if want in run(cand)[0]:
                keep = cand
            else:
                i += chunk
        if chunk == 1:
            break
        chunk = max(1, chunk // 2)
    found, out, _ = run(keep)
    control, _, _ = fz.trial(None, False, [allops[i] for i in keep])
    print('%d@%s (%d calls):' % (seed, '+'.join(map(str, keep)), len(keep)))
    for line in out.splitlines():
        if not line.startswith('cordon:'):
            print('  ' + line)
    print('findings:')
    for f in found:
        print('  ' + f)
    print('without cordon: %d differences' % len(control))
    rmtree(fz.top + '/t')
    return 1


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    cmd, rest = argv[0], argv[1:]
    if cmd == 'gen':
        for i, op in enumerate(parse_spec(rest[0])[1]):
            print('%3d %s' % (i, fmt_op(op)))
        return 0
    if cmd == 'drive':  # argv[0] is '-c' under python3 -c
        ws, evil, seq = rest[0], rest[1], rest[2]
        ops = [tuple(o) for o in json.loads(seq)] if seq.startswith('[') else gen(int(seq))
        Driver(ws, evil).run(ops, sys.stdout)
        return 0
    if cmd == 'setup':
        print(setup(os.path.abspath(rest[0])))
        return 0
    if cmd == 'snapshot':
        home = os.path.abspath(rest[0]) + '/../.githome'
        with open(rest[1], 'w') as f:
            json.dump(snapshot(os.path.abspath(rest[0]), home), f, indent=1, sort_keys=True)
        return 0
    if cmd == 'diff':
        with open(rest[0]) as f:
            b = json.load(f)
        with open(rest[1]) as f:
            a = json.load(f)
        found = diff(b, a)
        for x in found:
            print(x)
        return 1 if found else 0
    if cmd == 'fuzz':
        return main_fuzz(rest)
    if cmd == 'minimize':
        return main_minimize(rest)
    if cmd == 'replay':
        i = rest.index('--dir')
        return main_fuzz(rest[:-1] + ['--seeds', rest[-1], '--seconds', '0', '--control', '0']) if i >= 0 else 2
    print(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
