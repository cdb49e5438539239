// Assertions of the browser-run tests of the UI's modules.

export function eq(got, want, what = '') {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) throw new Error(`${what ? `${what}: ` : ''}got ${g}, want ${w}`);
}

export function ok(cond, what) {
  if (!cond) throw new Error(what);
}
