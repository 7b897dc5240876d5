/**
 * `#/findings/<id>`: where every channel's link lands. Loads the finding and replaces the
 * route with its run (the finding selected), so Back does not bounce through here.
 */
import { useEffect } from 'react';
import { useApi } from '../api.ts';
import { ErrorMessage, Loading } from '../components/Status.tsx';
import { redirect } from '../router.ts';
import { findingTarget, type Finding } from './types.ts';

export function FindingRedirect({ id }: { id: string }) {
  const { data, error } = useApi<Finding>(`/api/findings/${encodeURIComponent(id)}`);
  useEffect(() => {
    if (!data) return;
    const target = findingTarget(data);
    redirect(target.path, target.query);
  }, [data]);
  if (error)
    return (
      <>
        <h1>Finding {id}</h1>
        <ErrorMessage error={error} />
      </>
    );
  return <Loading what={`finding ${id}`} />;
}
