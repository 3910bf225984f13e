// SPDX-License-Identifier: Apache-2.0
// Builds the package's fast path, build/cordon.node (src/cordon_node.c: libcordon's
// sessions in this process), with the system's C compiler: no node-gyp, no download.
// Run by `npm install` (the "install" script). Where something is missing (a compiler,
// Node's headers, libcordon), it says so and the package runs the cordon command line
// instead: installing never fails for want of the fast path.
//
// Where libcordon is: $CORDON_LIB_DIR and $CORDON_INCLUDE_DIR (a meson build directory and
// the checkout's include/), else pkg-config's cordon (PKG_CONFIG_PATH=BUILD/meson-uninstalled
// finds a build's own), else the checkout this package sits in (../include, ../build).
'use strict';
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const here = __dirname;
const out = path.join(here, 'build', 'cordon.node');

function say(msg) {
  process.stderr.write(`cordon-sandbox: ${msg}\n`);
}

function pkgConfig(args) {
  try {
    return execFileSync('pkg-config', [...args, 'cordon'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .trim()
      .split(/\s+/)
      .filter(Boolean);
  } catch {
    return null;
  }
}

function nodeInclude() {
  const candidates = [
    process.env.NODE_INCLUDE_DIR,
    path.join(path.dirname(process.execPath), '..', 'include', 'node'),
    '/usr/include/node',
  ].filter(Boolean);
  // uv.h beside node_api.h (Node's own tarballs, NodeSource), or in /usr/include (Debian's
  // libnode-dev has it from libuv1-dev)
  return candidates.find(
    (d) => fs.existsSync(path.join(d, 'node_api.h')) && (fs.existsSync(path.join(d, 'uv.h')) || fs.existsSync('/usr/include/uv.h')),
  );
}

function cordonFlags() {
  const inc = process.env.CORDON_INCLUDE_DIR;
  const lib = process.env.CORDON_LIB_DIR;
  if (inc || lib) {
    const f = [];
    if (inc) f.push(`-I${inc}`);
    if (lib) f.push(`-L${lib}`, `-Wl,-rpath,${lib}`);
    return f;
  }
  const cflags = pkgConfig(['--cflags']);
  const libs = pkgConfig(['--libs-only-L']);
  if (cflags && libs) {
    // a build tree's own .pc names the checkout's top, whose include/ holds the header
    const extra = cflags
      .filter((f) => f.startsWith('-I') && fs.existsSync(path.join(f.slice(2), 'include', 'cordon.h')))
      .map((f) => `-I${path.join(f.slice(2), 'include')}`);
    return [...cflags, ...extra, ...libs, ...libs.map((l) => `-Wl,-rpath,${l.slice(2)}`)];
  }
  const top = path.join(here, '..');
  if (fs.existsSync(path.join(top, 'include', 'cordon.h')) && fs.existsSync(path.join(top, 'build', 'libcordon.so'))) {
    const lib = path.join(top, 'build');
    return [`-I${path.join(top, 'include')}`, `-L${lib}`, `-Wl,-rpath,${lib}`];
  }
  return [];
}

function main() {
  fs.rmSync(out, { force: true }); // never a stale fast path of another libcordon
  if (process.env.CORDON_NODE_ADDON === '0') return say('CORDON_NODE_ADDON=0: the command line only');
  const inc = nodeInclude();
  if (!inc) return say("Node's headers (node_api.h, uv.h) not found (Debian: libnode-dev): the command line only");
  const cc = process.env.CC || 'cc';
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const args = [
    '-O2', '-shared', '-fPIC', '-std=gnu17', '-Wall', '-Wextra', '-Werror',
    '-DNODE_GYP_MODULE_NAME=cordon', '-DNAPI_VERSION=8',
    `-I${inc}`, ...cordonFlags(),
    '-o', `${out}.tmp`, path.join(here, 'src', 'cordon_node.c'), '-lcordon',
  ];
  try {
    execFileSync(cc, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    fs.renameSync(`${out}.tmp`, out);
  } catch (e) {
    fs.rmSync(`${out}.tmp`, { force: true });
    return say(`the fast path did not build (${e.message.split('\n')[0]}): the command line only`);
  }
}

main();
