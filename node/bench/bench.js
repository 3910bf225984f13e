// SPDX-License-Identifier: Apache-2.0
// The Node package's figures (bench/bindings.sh runs it beside the C library's):
//   session   a command (`true`, output collected) in one session: Session.run, in the
//             default session (libcordon's in this process, the fast path) and in a
//             published one (`cordon session exec` per command)
//   output    `head -c SIZE /dev/zero` read as a stream through spawn() (cordon run) and
//             through a command of the default session, against child_process.spawn's
//             plain pipe, and against the same plain pipe with `head` in a session of its
//             own (detached: setsid, as the sandbox's command is: a scheduling group of its
//             own where autogroups are on, which is what costs on a loaded machine);
//             MiB/s, medians, rounds rotate
// Prints one line per figure: "NAME VALUE".
//   CORDON=build/cordon node node/bench/bench.js [--rounds N] [--size BYTES] [--output-rounds N]
'use strict';
const childProcess = require('node:child_process');
const cordon = require('cordon-sandbox');

function median(v) {
  v.sort((a, b) => a - b);
  return v[Math.floor(v.length / 2)];
}

async function drain(stream) {
  let n = 0;
  for await (const chunk of stream) n += chunk.length;
  return n;
}

async function main() {
  const opt = { rounds: 200, size: 1 << 30, 'output-rounds': 5 };
  const a = process.argv.slice(2);
  for (let i = 0; i + 1 < a.length; i += 2) opt[a[i].replace(/^--/, '')] = Number(a[i + 1]);

  // the default session (the fast path when built) and a published one (the command
  // line), rounds alternating
  const lib = await cordon.Session.start({ workspace: process.cwd() });
  const cli = await cordon.Session.start({ workspace: process.cwd(), name: `bench-${process.pid}` });
  const ms = { [lib.backend]: [], cli_published: [] };
  const one = async (s, into) => {
    const t0 = process.hrtime.bigint();
    const r = await s.run(['true']);
    if (r.status !== 0) throw new Error(`true exited ${r.status}: ${r.stderr}`);
    into.push(Number(process.hrtime.bigint() - t0) / 1e6);
  };
  try {
    for (let i = 0; i < 10; i++) await Promise.all([lib.run(['true']), cli.run(['true'])]);
    for (let i = 0; i < opt.rounds; i++) {
      if (i % 2 === 0) {
        await one(lib, ms[lib.backend]);
        await one(cli, ms.cli_published);
      } else {
        await one(cli, ms.cli_published);
        await one(lib, ms[lib.backend]);
      }
    }
  } finally {
    await lib.stop();
    await cli.stop();
  }
  console.log(`session_node_${lib.backend}_ms ${median(ms[lib.backend]).toFixed(3)}`);
  console.log(`session_node_cli_ms ${median(ms.cli_published).toFixed(3)}`);

  // output: child_process's plain pipe, spawn() (cordon run), and a command of the
  // default session (the fast path's pipes); the three in turn, the order rotating
  const mib = opt.size / (1 << 20);
  const out = { plain: [], setsid: [], run: [], session: [] };
  const args = ['-c', String(opt.size), '/dev/zero'];
  const session = await cordon.Session.start({ workspace: process.cwd() });
  const kinds = ['plain', 'setsid', 'run', 'session'];
  try {
    for (let r = 0; r < opt['output-rounds'] * kinds.length; r++) {
      const kind = kinds[(r + Math.floor(r / kinds.length)) % kinds.length];
      const t0 = process.hrtime.bigint();
      let n;
      if (kind === 'plain' || kind === 'setsid') {
        const c = childProcess.spawn('head', args, { stdio: ['ignore', 'pipe', 'inherit'], detached: kind === 'setsid' });
        const closed = new Promise((res) => c.once('close', res));
        n = await drain(c.stdout);
        await closed;
      } else {
        const c = kind === 'run' ? cordon.spawn(['head', ...args], { workspace: process.cwd() }) : session.spawn(['head', ...args]);
        c.stderr.resume();
        n = await drain(c.stdout);
        await c.wait();
      }
      if (n !== opt.size) throw new Error(`read ${n} of ${opt.size} bytes`);
      out[kind].push(mib / (Number(process.hrtime.bigint() - t0) / 1e9));
    }
  } finally {
    await session.stop();
  }
  console.log(`output_node_plain_mibs ${median(out.plain).toFixed(0)}`);
  console.log(`output_node_plain_setsid_mibs ${median(out.setsid).toFixed(0)}`);
  console.log(`output_node_mibs ${median(out.run).toFixed(0)}`);
  console.log(`output_node_session_${session.backend}_mibs ${median(out.session).toFixed(0)}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
