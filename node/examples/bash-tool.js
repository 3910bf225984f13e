// SPDX-License-Identifier: Apache-2.0
// An agent's bash tool on cordon: one session for the whole conversation, each tool call
// a command in it, with a timeout, its output merged and cut to what a model can read.
//   CORDON=../build/cordon node examples/bash-tool.js 'ls; echo $((6*7))' 'cat nope'
'use strict';
const { Session } = require('cordon-sandbox'); // in a harness, after `npm install ./node`

const LIMIT = 30000; // characters of output a model is shown

async function bashTool(session, command, { timeout = 120, signal } = {}) {
  const r = await session.run(['bash', '-c', command], { timeout, signal, mergeStderr: true });
  let out = r.stdout;
  if (out.length > LIMIT) out = out.slice(0, LIMIT) + `\n[... ${out.length - LIMIT} more characters]`;
  if (r.timedOut) out += `\n[timed out after ${timeout} s]`;
  else if (r.signal) out += `\n[killed by ${r.signal}]`;
  else if (r.status !== 0) out += `\n[exit status ${r.status}]`;
  return out;
}

async function main() {
  const session = await Session.start({ workspace: process.cwd(), network: 'none' });
  try {
    for (const command of process.argv.slice(2)) console.log(`$ ${command}\n${await bashTool(session, command)}`);
  } finally {
    await session.stop();
  }
}
main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
