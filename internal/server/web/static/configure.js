// The wizard's Configuration step: the target version, the catalog, the
// plans' values and allowDowngrade; "Check" (POST .../infra/check, which
// changes nothing) shows the hops and each one's preview; once the inputs
// as they are were checked, Next carries them to the Host preflights
// step, which starts the upgrade (embedded-cluster's order). An upgrade
// without a hop has neither that step nor the infrastructure's: it
// starts here (POST .../infra/upgrade) and goes on to the app.

import { h, text, errorBox, setError, busy, announce } from './dom.js';
import { post, upgrade, session } from './api.js';
import { startWithoutInfra } from './start.js';
import { parseValues } from './model.js';
import { renderPreview } from './preview.js';

let rowSeq = 0;

// field is a labelled input with its help and its error, tied together
// with aria-describedby.
function field(id, label, input, help) {
  const error = h('p', { class: 'field-error', id: `${id}-error`, hidden: true, dataset: { testid: `${id}-error` } });
  input.id = id;
  input.setAttribute('aria-describedby', [help ? `${id}-help` : '', `${id}-error`].filter(Boolean).join(' '));
  return {
    input,
    error,
    el: h('div', { class: 'field' },
      h('label', { for: id }, label),
      input,
      help ? h('p', { class: 'help', id: `${id}-help` }, help) : null,
      error),
  };
}

function setFieldError(f, msg) {
  f.error.hidden = !msg;
  text(f.error, msg || '');
  if (msg) f.input.setAttribute('aria-invalid', 'true');
  else f.input.removeAttribute('aria-invalid');
}

// flags: the wizard's {isAirgap, requiresInfraUpgrade}; onChecked(res)
// when a check answered; onNext(request) to the next step; onStarted
// once an upgrade without a hop started; onFollow to the running one.
export function configurationStep({ state, flags, onBack, onChecked, onNext, onStarted, onFollow }) {
  const admin = session.isAdmin();
  const target = field('target-version', 'Target version',
    h('input', { type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', value: state?.targetVersion || '', dataset: { testid: 'target-version' } }),
    'The platform version to reach; Check says which version runs now.');
  const catalog = field('catalog', 'Catalog (optional)',
    h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'configmap/NAME', dataset: { testid: 'catalog' } }),
    `Empty: the server's catalog${state?.catalog ? ` (${state.catalog})` : ''}. Or a ConfigMap of the runs namespace (configmap/NAME), or an https URL.`);
  const downgrade = h('input', { type: 'checkbox', id: 'allow-downgrade', dataset: { testid: 'allow-downgrade' } });

  const rows = h('div', { class: 'value-rows', dataset: { testid: 'values' } });
  const valuesError = h('p', { class: 'field-error', id: 'values-error', hidden: true });
  function addRow(k = '', v = '') {
    const n = ++rowSeq;
    const key = h('input', { type: 'text', id: `value-key-${n}`, value: k, autocomplete: 'off', spellcheck: 'false', dataset: { testid: 'value-key' } });
    const val = h('input', { type: 'text', id: `value-value-${n}`, value: v, autocomplete: 'off', spellcheck: 'false', dataset: { testid: 'value-value' } });
    const row = h('div', { class: 'value-row' },
      h('label', { for: key.id, class: 'visually-hidden' }, `Key of value ${n}`), key,
      h('span', { 'aria-hidden': 'true' }, '='),
      h('label', { for: val.id, class: 'visually-hidden' }, `Value of value ${n}`), val);
    const remove = h('button', { type: 'button', class: 'small', 'aria-label': `Remove value ${n}`, dataset: { testid: 'value-remove' } }, 'Remove');
    remove.addEventListener('click', () => {
      row.remove();
      changed();
      addButton.focus();
    });
    row.append(remove);
    rows.append(row);
    return key;
  }
  const addButton = h('button', { type: 'button', class: 'small', dataset: { testid: 'value-add' } }, 'Add a value');
  addButton.addEventListener('click', () => addRow().focus());

  const err = errorBox({ dataset: { testid: 'configuration-error' } });
  const check = h('button', { type: 'submit', dataset: { testid: 'check' } }, 'Check');
  const start = h('button', { type: 'button', class: 'primary', disabled: true, hidden: !admin, dataset: { testid: 'configuration-next' } }, 'Next');
  const startHelp = h('p', { class: 'help', id: 'start-help', dataset: { testid: 'start-help' } }, 'Check first: the upgrade starts with what was checked.');
  // direct: the checked upgrade has no hop and no airgap bundle, so it
  // starts here.
  const direct = () => !flags.requiresInfraUpgrade && !flags.isAirgap;
  start.setAttribute('aria-describedby', 'start-help');
  const result = h('div', { class: 'check-result', 'aria-live': 'polite', dataset: { testid: 'check-result' } });
  const back = h('button', { type: 'button', dataset: { testid: 'wizard-back' } }, 'Back');
  back.addEventListener('click', () => onBack());

  const form = h('form', { class: 'card', novalidate: true, 'aria-label': 'Upgrade configuration' },
    target.el,
    catalog.el,
    h('fieldset', {},
      h('legend', {}, 'Values (optional)'),
      h('p', { class: 'help', id: 'values-help' }, 'key=value pairs the catalog\'s plans read (for example a chart\'s repository URL).'),
      rows, valuesError, addButton),
    h('div', { class: 'field field-check' },
      downgrade, h('label', { for: 'allow-downgrade' }, 'Allow a downgrade (a target older than the running version)')),
    err,
    h('div', { class: 'actions' }, check));

  // What was checked: Start sends exactly this.
  let checked = null;
  function body() {
    const values = parseValues([...rows.querySelectorAll('.value-row')].map((r) => {
      const [k, v] = r.querySelectorAll('input');
      return [k.value, v.value];
    }));
    return { targetVersion: target.input.value.trim(), catalog: catalog.input.value.trim(), values, allowDowngrade: downgrade.checked };
  }
  function changed() {
    if (!checked) return;
    checked = null;
    start.disabled = true;
    text(startHelp, 'The inputs changed since the check: check again.');
  }
  form.addEventListener('input', changed);
  form.addEventListener('change', changed);

  function showErrors(e) {
    setFieldError(target, '');
    setFieldError(catalog, '');
    valuesError.hidden = true;
    if (!e) {
      setError(err, null);
      return;
    }
    setError(err, e);
    const all = [{ field: e.field, message: e.message }, ...(e.errors || [])];
    for (const x of all) {
      if (!x.field) continue;
      if (x.field === 'targetVersion') setFieldError(target, x.message);
      else if (x.field === 'catalog') setFieldError(catalog, x.message);
      else if (x.field.startsWith('values')) {
        valuesError.hidden = false;
        text(valuesError, `${x.field}: ${x.message}`);
      }
    }
    const bad = form.querySelector('[aria-invalid="true"]');
    if (bad) bad.focus();
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    let req;
    try {
      req = body();
    } catch (e) {
      showErrors(e);
      return;
    }
    if (!req.targetVersion) {
      showErrors(Object.assign(new Error('the target version is required'), { field: 'targetVersion' }));
      return;
    }
    showErrors(null);
    result.replaceChildren(h('p', {}, 'Checking…'));
    try {
      const res = await busy(check, () => post(upgrade('infra/check'), req));
      checked = req;
      onChecked?.(res);
      start.disabled = false;
      text(start, direct() ? 'Start upgrade' : 'Next');
      const to = res.targetVersion || req.targetVersion;
      text(startHelp, direct()
        ? `No infrastructure upgrade: starts the upgrade to ${to} as checked, then the app's preflights.`
        : `Next: ${flags.isAirgap ? 'the airgap bundle, then ' : ''}the host preflights, then the upgrade to ${to} as checked.`);
      result.replaceChildren(renderCheck(res));
      announce(`Checked: ${res.currentVersion || 'unknown'} to ${res.targetVersion || req.targetVersion}, ${(res.hops || []).length} hop(s)`);
    } catch (e) {
      result.replaceChildren();
      showErrors(e);
    }
  });

  start.addEventListener('click', async () => {
    if (!checked) return;
    if (!direct()) {
      onNext(checked);
      return;
    }
    try {
      await busy(start, () => startWithoutInfra(checked));
      announce('Upgrade started: no infrastructure upgrade needed');
      onStarted();
    } catch (e) {
      showErrors(e);
      if (e.statusCode === 409) {
        err.append(h('button', { type: 'button', dataset: { testid: 'follow-running' }, on: { click: onFollow } }, 'Follow the running upgrade'));
      }
    }
  });

  return {
    el: h('div', {},
      form,
      result,
      h('div', { class: 'wizard-nav' }, back,
        admin ? h('div', {}, start, startHelp) : h('p', { class: 'notice' }, 'A viewer can check an upgrade, not start it.'))),
    dispose() {},
  };
}

// renderCheck shows a check's answer: current → target, what was found,
// and per hop its preview.
export function renderCheck(res) {
  const hops = res.hops || [];
  return h('section', { 'aria-labelledby': 'check-heading' },
    h('h3', { id: 'check-heading' }, 'What the upgrade does'),
    h('p', { class: 'versions', dataset: { testid: 'check-versions' } },
      h('strong', {}, res.currentVersion || 'unknown'), ' → ', h('strong', {}, res.targetVersion || '?'),
      res.kubernetes ? ` (Kubernetes ${res.kubernetes})` : ''),
    res.requiresInfraUpgrade === false ? h('p', { class: 'notice', dataset: { testid: 'no-infra-upgrade' } }, 'The platform is at the target already: there is no hop to run.') : null,
    res.describe?.length ? h('ul', { class: 'describe' }, res.describe.map((d) => h('li', {}, d))) : null,
    res.findings?.length
      ? h('details', {}, h('summary', {}, 'Where the running version was found'),
        h('ul', {}, res.findings.map((f) => h('li', {}, h('code', {}, f.version || '?'), ` from ${f.source || '?'}`))))
      : null,
    hops.length
      ? h('ol', { class: 'hops', dataset: { testid: 'hops' } }, hops.map((hop, i) => h('li', { dataset: { testid: 'hop', from: hop.from, to: hop.to } },
        h('h4', {}, `Hop ${i + 1}: ${hop.from || '?'} → ${hop.to || '?'}`, hop.plan ? h('span', { class: 'muted' }, ` (plan ${hop.plan})`) : null),
        hop.note ? h('p', { class: 'note' }, hop.note) : null,
        renderPreview(hop.preview, `hop-${i}`))))
      : null);
}
