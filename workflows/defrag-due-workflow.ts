// What the defrag schedule's Temporal Schedule starts at each firing: tell the cluster workflow a scheduled Defrag is due.
//
// It only signals: the cluster workflow decides when the Defrag runs (after the operation under way, once the
// cluster can take one) with the same plan and gates as a threshold Defrag. A cluster workflow that does not run
// (the cluster is being deleted) has nothing to defragment: the firing ends with a note instead of a failure.
import { ApplicationFailure, getExternalWorkflowHandle, setCurrentDetails } from '@temporalio/workflow';
import type { ClusterRef } from '../contracts/cluster-ref';
import { clusterWorkflowId, defragDueSignal } from '../contracts/messages';

export async function defragDueWorkflow(input: {
  ref: ClusterRef;
}): Promise<'signalled' | 'no-cluster-workflow'> {
  const { ref } = input;
  const workflowId = clusterWorkflowId(ref.namespace, ref.name);
  try {
    await getExternalWorkflowHandle(workflowId).signal(defragDueSignal, { uid: ref.uid });
  } catch (err) {
    // The server's refusal (no open run of that id) arrives as an ApplicationFailure; a cancellation goes on up.
    if (!(err instanceof ApplicationFailure)) throw err;
    setCurrentDetails(`no cluster workflow ${workflowId} runs: nothing to defragment`);
    return 'no-cluster-workflow';
  }
  setCurrentDetails(`told ${workflowId} that the defrag schedule fired`);
  return 'signalled';
}
