// The upgrade wizard (embedded-cluster's, docs/api.md): Welcome →
// Configuration → [Airgap bundle] → [Host preflights → Infrastructure
// upgrade] → App preflights → App upgrade → Done; phaseOrder (model.js)
// says which steps show: the airgap one when the server is airgap, the
// infrastructure's when the check found hops. The server's state (GET
// /api/linux/upgrade/state) decides the step shown on load, so a reload
// or a restarted server picks up where it was; once an upgrade started
// there is no Back.

import { h, text, announce, errorBox, setError, dl } from './dom.js';
import { get, upgrade, session } from './api.js';
import { STEPS, phaseOrder, flagsForState, landingStep, humanize } from './model.js';
import { phaseView } from './phase.js';
import { configurationStep } from './configure.js';
import { preflightsStep } from './preflights.js';
import { hostPreflightsStep } from './hostpreflights.js';
import { airgapStep } from './airgap.js';
import { startWithoutInfra, serverRequest } from './start.js';
import { doneStep } from './done.js';

export function renderWizard(main) {
  let view = null;
  let current = '';
  let disposed = false;
  let lastState = null; // the server's state as last read
  let flags = flagsForState(null); // phaseOrder's inputs
  let carried = null; // the request the Configuration chose
  const admin = session.isAdmin();

  const stepper = h('ol', { class: 'stepper' });
  const body = h('div', { class: 'wizard-body' });
  const err = errorBox({ dataset: { testid: 'wizard-error' } });
  main.replaceChildren(
    h('h1', { tabindex: '-1', dataset: { testid: 'wizard-heading' } }, 'Upgrade'),
    h('nav', { 'aria-label': 'Upgrade steps' }, stepper),
    err,
    body);

  const shown = () => phaseOrder(flags);

  function renderStepper() {
    const steps = shown();
    const at = steps.findIndex((s) => s.id === current);
    stepper.replaceChildren(...steps.map((s, i) => {
      const status = i < at ? 'done' : i === at ? 'current' : 'upcoming';
      return h('li', { class: `step-${status}`, 'aria-current': i === at ? 'step' : undefined, dataset: { testid: `stepper-${s.id}`, status } },
        h('span', { class: 'step-num', 'aria-hidden': 'true' }, status === 'done' ? '✓' : String(i + 1)),
        h('span', {}, s.title),
        h('span', { class: 'visually-hidden' }, status === 'done' ? ' (done)' : status === 'current' ? ' (current step)' : ''));
    }));
  }

  // stepSection is a step's section with its heading, which takes the
  // focus when the step shows.
  function stepSection(id, intro, ...content) {
    const s = STEPS.find((x) => x.id === id);
    return h('section', { class: 'step', id: `step-${id}`, 'aria-labelledby': 'wizard-step-heading', dataset: { testid: `step-${id}` } },
      h('h2', { id: 'wizard-step-heading', tabindex: '-1', dataset: { testid: 'wizard-step-heading', step: id } }, s.title),
      intro ? h('p', { class: 'intro' }, intro) : null,
      ...content);
  }

  // moves counts the steps shown: a state read that answers after the
  // user moved on must not take them back.
  let moves = 0;

  // stepView builds a step's view (kept in view, disposed when the
  // wizard moves on) and returns its section.
  function stepView(id, state) {
    let section;
    switch (id) {
      case 'configuration': {
        view = configurationStep({
          state, flags,
          onBack: () => goTo('welcome', state),
          onChecked: (res) => {
            flags.requiresInfraUpgrade = res.requiresInfraUpgrade !== false;
            renderStepper();
          },
          onNext: (req) => {
            carried = req;
            goTo(flags.isAirgap ? 'airgap' : 'host-preflights');
          },
          onStarted: () => goTo('app-preflights'),
          onFollow: () => goTo('infra'),
        });
        section = stepSection(id, 'Choose the version to reach, check what it changes, then go on.', view.el);
        break;
      }
      case 'airgap': {
        view = airgapStep({ onNext: afterAirgap });
        section = stepSection(id, 'The airgap bundle\'s images and artifacts are processed before the upgrade.', view.el);
        break;
      }
      case 'host-preflights': {
        const fresh = Boolean(carried);
        view = hostPreflightsStep({
          request: carried || serverRequest(state), run: fresh ? true : 'if-pending',
          onBack: () => goTo('configuration', state), onStarted: () => goTo('infra'),
        });
        section = stepSection(id, 'Every node is checked before the platform changes: Ready, not under pressure, not cordoned.', view.el);
        break;
      }
      case 'infra': {
        view = phaseView({
          kind: 'infra', statusPath: upgrade('infra/status'), title: 'Infrastructure upgrade',
          onNext: () => goTo('app-preflights'),
          failureExtras: () => [h('button', { type: 'button', dataset: { testid: 'new-target' }, on: { click: () => goTo('configuration') } }, 'Choose another target')],
        });
        section = stepSection(id, 'The platform goes through the catalog\'s hops, stage by stage. A failed hop is rolled back and its restore verified (unless its plan turns autoRollback off: then Roll back and Retry are offered).', view.el);
        break;
      }
      case 'app-preflights': {
        view = preflightsStep({ onStarted: () => goTo('app-upgrade') });
        section = stepSection(id, 'The app plan\'s preflight and its checks, by severity.', view.el);
        break;
      }
      case 'app-upgrade': {
        view = phaseView({
          kind: 'app', statusPath: upgrade('app/status'), title: 'App upgrade',
          onNext: () => goTo('done'),
          failureExtras: () => [h('button', { type: 'button', dataset: { testid: 'new-target' }, on: { click: () => goTo('configuration') } }, 'Start a new upgrade')],
        });
        section = stepSection(id, 'The app plan runs on the upgraded platform.', view.el);
        break;
      }
      case 'done': {
        view = doneStep({ onNew: () => goTo('configuration') });
        section = stepSection(id, 'The upgrade is done. The reports of its runs:', view.el);
        break;
      }
      default: {
        section = stepSection('welcome', null, welcome(state));
        break;
      }
    }
    return section;
  }

  function goTo(id, given, { focus = true } = {}) {
    if (disposed) return;
    moves++;
    const state = given || lastState;
    view?.dispose?.();
    view = null;
    current = id;
    renderStepper();
    const section = stepView(id, state);
    body.replaceChildren(section);
    const steps = shown();
    const n = steps.findIndex((s) => s.id === id) + 1;
    const title = STEPS.find((s) => s.id === id)?.title || 'Upgrade';
    document.title = `${title} · Upshift`;
    announce(n ? `Step ${n} of ${steps.length}: ${title}` : title);
    if (focus) section.querySelector('h2')?.focus();
  }

  // afterAirgap: the host preflights, or, without a hop, the upgrade's
  // start and the app's preflights.
  async function afterAirgap() {
    if (flags.requiresInfraUpgrade) {
      goTo('host-preflights');
      return;
    }
    await startWithoutInfra(carried || serverRequest(lastState));
    goTo('app-preflights');
  }

  function welcome(state) {
    const start = h('button', { type: 'button', class: 'primary', dataset: { testid: 'wizard-start' } }, 'Get started');
    start.addEventListener('click', () => goTo('configuration', state));
    return h('div', {},
      h('p', {}, 'Upshift upgrades this cluster\'s platform hop by hop along its release catalog, backing up before every change and rolling back a stage that fails, then upgrades the app.'),
      state ? dl([
        ['Running version', state.currentVersion],
        ['Target version', state.targetVersion || ''],
        ['Catalog', state.catalog || ''],
        ['App plan', state.appPlan || 'none'],
        ['State', state.state ? humanize(state.state) : ''],
      ], { dataset: { testid: 'welcome-state' } }) : null,
      admin ? null : h('p', { class: 'notice' }, 'You are signed in as a viewer: you can check an upgrade and follow one, not start it.'),
      h('div', { class: 'wizard-nav' }, start));
  }

  async function load() {
    setError(err, null);
    text(body, 'Loading the upgrade\'s state…');
    const at = moves;
    try {
      const state = await get(upgrade('state'));
      lastState = state;
      if (moves === at) {
        flags = flagsForState(state);
        goTo(landingStep(state), state, { focus: false });
      }
    } catch (e) {
      if (disposed) return;
      setError(err, e);
      body.replaceChildren(h('button', { type: 'button', dataset: { testid: 'wizard-reload' }, on: { click: load } }, 'Try again'));
    }
  }
  load();

  return {
    dispose() {
      disposed = true;
      view?.dispose?.();
    },
  };
}
