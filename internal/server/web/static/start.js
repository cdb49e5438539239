// The starts of the infrastructure upgrade (POST .../infra/upgrade): from
// the Host preflights step, or, for an upgrade without a hop (no
// infrastructure upgrade: embedded-cluster shows neither step then),
// straight from the step before the app's preflights.

import { get, post, upgrade } from './api.js';

// startInfra starts the upgrade the Configuration chose (request: its
// targetVersion, catalog, values, allowDowngrade).
export function startInfra(request, ignoreHostPreflights = false) {
  return post(upgrade('infra/upgrade'), { ...request, ignoreHostPreflights });
}

// startWithoutInfra starts an upgrade that has no hop and waits until
// the server's infrastructure phase ended, at once without a hop: the
// app's preflights run only after it (InfrastructureUpgraded). It throws
// the phase's failure.
export async function startWithoutInfra(request, { pollMs = 500, timeoutMs = 120000 } = {}) {
  let st = await startInfra(request);
  const until = Date.now() + timeoutMs;
  while (st?.status?.state !== 'Succeeded') {
    if (st?.status?.state === 'Failed') throw new Error(st.status.description || 'the infrastructure phase failed');
    if (Date.now() > until) throw new Error('the infrastructure phase has not ended: see Runs');
    await new Promise((r) => setTimeout(r, pollMs));
    st = await get(upgrade('infra/status'));
  }
  return st;
}

// serverRequest is the request a wizard reloaded past the Configuration
// starts with: the server's target (GET .../state), the rest its own.
export function serverRequest(state) {
  return { targetVersion: state?.targetVersion || '' };
}
