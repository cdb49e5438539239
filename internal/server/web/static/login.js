// The login screen: the password for a token (POST /api/auth/login).

import { h, errorBox, setError, busy } from './dom.js';
import { login } from './api.js';

// renderLogin fills main; onDone runs once signed in. notice (why the
// session ended) shows above the form.
export function renderLogin(main, { onDone, notice }) {
  const password = h('input', {
    id: 'login-password', name: 'password', type: 'password', autocomplete: 'current-password',
    required: true, 'aria-describedby': 'login-help', dataset: { testid: 'login-password' },
  });
  const submit = h('button', { type: 'submit', id: 'login-submit', dataset: { testid: 'login-submit' } }, 'Sign in');
  const err = errorBox({ id: 'login-error', dataset: { testid: 'login-error' } });
  const form = h('form', { class: 'card narrow', 'aria-labelledby': 'login-heading', novalidate: true },
    h('div', { class: 'field' },
      h('label', { for: 'login-password' }, 'Password'),
      password,
      h('p', { id: 'login-help', class: 'help' }, 'The admin or viewer password of this server (a viewer sees everything and changes nothing).')),
    err,
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!password.value) {
      setError(err, new Error('enter the password'));
      password.setAttribute('aria-invalid', 'true');
      password.focus();
      return;
    }
    setError(err, null);
    try {
      await busy(submit, () => login(password.value));
      password.value = '';
      onDone();
    } catch (ex) {
      const wrong = ex.statusCode === 401 || ex.statusCode === 403;
      setError(err, wrong ? new Error('wrong password') : ex);
      password.setAttribute('aria-invalid', 'true');
      password.select();
      password.focus();
    }
  });
  main.replaceChildren(
    h('h1', { id: 'login-heading', tabindex: '-1', dataset: { testid: 'login-heading' } }, 'Sign in to Upshift'),
    ...(notice ? [h('p', { class: 'notice', role: 'status', dataset: { testid: 'login-notice' } }, notice)] : []),
    form);
  password.focus();
  return { dispose() {} };
}
