// The operator pages' access to /admin: the admin key, kept in sessionStorage apart from the
// Context API key, requests with it, and a hook that loads a path with it.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api } from './api.js';

const ADMIN = 'contextgate.admin';
export const adminKey = () => sessionStorage.getItem(ADMIN) ?? '';
export const setAdminKey = (key) => (key ? sessionStorage.setItem(ADMIN, key) : sessionStorage.removeItem(ADMIN));
// Signed in (the session's cookie goes by itself), no key is sent.
export const admin = (method, path, body) =>
  api(method, path, body, adminKey() ? { bearer: adminKey() } : { auth: false });
// The headers of a plain fetch of /admin (a stream, a file): the admin key's, or none.
export const adminHeaders = () => (adminKey() ? { authorization: 'Bearer ' + adminKey() } : {});

// Loads `path` with the admin key; `reload` asks again. A refused key calls `onRefused`. `data`
// is null until `path` itself has answered (never an earlier path's answer, nor one that
// arrives after a later request's). A null `path` asks nothing (a page that needs it only for
// some roles).
export function useAdmin(path, onRefused) {
  const [got, setGot] = useState({ path: null, data: null });
  const [error, setError] = useState('');
  const asked = useRef(0);
  const reload = useCallback(async () => {
    const request = ++asked.current;
    if (path === null) return;
    try {
      const data = await admin('GET', path);
      if (request !== asked.current) return;
      setGot({ path, data });
      setError('');
    } catch (err) {
      if (request !== asked.current) return;
      if (err instanceof ApiError && err.status === 401) onRefused();
      else setError(err.message);
    }
  }, [path, onRefused]);
  useEffect(() => { reload(); }, [reload]);
  return { data: got.path === path ? got.data : null, error, reload };
}
