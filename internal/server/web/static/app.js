// The app: a hash router (#/ the wizard, #/runs, #/runs/NAME, #/apps,
// #/apps/NS/NAME, #/preview, #/login) that shows the login screen while there is no session.

import { session } from './api.js';
import { announce, startTicker, text } from './dom.js';
import { renderLogin } from './login.js';
import { renderWizard } from './wizard.js';
import { renderRuns, renderRun, renderPreviewPage } from './runs.js';
import { renderApps, renderApp } from './apps.js';

const AFTER_LOGIN = 'upshift.afterLogin';

let view = null;
let notice = '';
let rendered = false;

// route is the hash's path: "#/runs/x" → "/runs/x"; a hash that is not
// a route (the skip link's #main) keeps the page as it is.
function route() {
  const hash = location.hash;
  if (!hash || hash === '#') return '/';
  return hash.startsWith('#/') ? hash.slice(1) : null;
}

function updateNav(path) {
  const nav = document.getElementById('site-nav');
  const s = session.get();
  nav.hidden = !s;
  text(document.getElementById('session-role'), s ? `Signed in as ${s.role || 'unknown'}` : '');
  for (const a of nav.querySelectorAll('a')) {
    const target = a.getAttribute('href').slice(1);
    const current = target === '/' ? path === '/' : path === target || path.startsWith(`${target}/`);
    if (current) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function render() {
  // On the first load a hash that is no route shows the wizard.
  const path = route() ?? (rendered ? null : '/');
  if (path === null) return;
  view?.dispose?.();
  view = null;
  const main = document.getElementById('main');
  updateNav(path);

  if (!session.get()) {
    if (path !== '/login') sessionStorage.setItem(AFTER_LOGIN, path);
    document.title = 'Sign in · Upshift';
    view = renderLogin(main, {
      notice,
      onDone() {
        notice = '';
        const to = sessionStorage.getItem(AFTER_LOGIN) || '/';
        sessionStorage.removeItem(AFTER_LOGIN);
        announce(`Signed in as ${session.role()}`);
        if (location.hash === `#${to}`) render();
        else location.hash = `#${to}`;
      },
    });
    rendered = true;
    return;
  }

  let m;
  if (path === '/login') {
    location.replace('#/');
    return;
  } else if (path === '/runs') {
    document.title = 'Runs · Upshift';
    view = renderRuns(main);
  } else if ((m = path.match(/^\/runs\/([^/]+)$/))) {
    view = renderRun(main, decodeURIComponent(m[1]));
  } else if (path === '/apps') {
    document.title = 'App rollouts · Upshift';
    view = renderApps(main);
  } else if ((m = path.match(/^\/apps\/([^/]+)\/([^/]+)$/))) {
    view = renderApp(main, decodeURIComponent(m[1]), decodeURIComponent(m[2]));
  } else if (path === '/preview') {
    document.title = 'Preview a plan · Upshift';
    view = renderPreviewPage(main);
  } else {
    document.title = 'Upgrade · Upshift';
    view = renderWizard(main);
  }
  // The page's heading takes the focus (screen readers say where they
  // are), except on the first load.
  if (rendered) main.querySelector('h1')?.focus();
  rendered = true;
}

window.addEventListener('hashchange', render);
window.addEventListener('upshift:unauthorized', (e) => {
  notice = e.detail?.message || '';
  render();
});

document.getElementById('logout').addEventListener('click', () => {
  session.clear();
  notice = 'Signed out.';
  sessionStorage.removeItem(AFTER_LOGIN);
  if (location.hash === '#/' || !location.hash) render();
  else location.hash = '#/';
});

// The skip link moves the focus to the content without changing the
// hash (the router's).
document.querySelector('.skip-link').addEventListener('click', (e) => {
  e.preventDefault();
  document.getElementById('main').focus();
});

// A path route (/runs/NAME, from a link or a bookmark: the server
// answers the page for any path) is read as its hash route.
if (location.pathname !== '/' && !location.hash) {
  history.replaceState(null, '', `/#${location.pathname === '/index.html' ? '/' : location.pathname}`);
}

startTicker();
render();
