/*===- ErrorRecord.h - the layout of a launch's error record ------*- C -*-===*\
|*                                                                            *|
|* Every launch passes its kernel entry (CPU or GPU) one error record: an     *|
|* array of int64 words. The kernel's checks write the first failure into it *|
|* (adjit.access_error), the launch puts the value ranges of index arrays in *|
|* (adjit.index_range) and, on the CPU, where float atomic adds go           *|
|* (adjit-defer-float-atomics). This header is the one place the words are   *|
|* numbered: the runtime (KernelArgs.h's ErrorRecord is checked against it), *|
|* the passes that read and write the record, and Python                     *|
|* (adjit._runtime.ERROR_RECORD; tools/gpu_runner.py reads this file).       *|
|* Plain C, so that any of them can include it.                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ADJIT_RUNTIME_ERRORRECORD_H
#define ADJIT_RUNTIME_ERRORRECORD_H

/* The word index of each field (one int64 word per index unless noted). */
enum AdjitErrorRecordWord {
  /* 0 while nothing failed; else the failing check's site number + 1, or
     AdjitLaunchUnproven, or AdjitHeapExhausted. */
  AdjitRecordSite = 0,
  /* The failing thread's linear index. */
  AdjitRecordThread = 1,
  /* AdjitRecordMaxRank words: the index the failing access used. */
  AdjitRecordIndex = 2,
  /* AdjitRecordMaxRank words: the extents of the array it accessed. */
  AdjitRecordSize = 6,
  /* 2 * AdjitRecordMaxRanged words: (min, max) of each index array whose
     range the launch condition reads, filled in before the launch. */
  AdjitRecordRanges = 10,
  /* Where the float atomic adds of the threads go (CPU): 0 add atomically,
     AdjitDirectAdds add directly, else the runtime's add log. */
  AdjitRecordAddLog = 18,
  /* The number of words. */
  AdjitRecordWords = 19
};

enum AdjitErrorRecordLimits {
  /* Dimensions of a failing access recorded (index and size words). */
  AdjitRecordMaxRank = 4,
  /* Index arrays whose ranges one launch passes. */
  AdjitRecordMaxRanged = 4
};

enum AdjitErrorRecordValues {
  /* AdjitRecordSite of a launch whose launch condition (its proved bounds
     checks) does not hold: the entry ran no thread, and the launch must be
     run again with the kernel's all-checked variant. */
  AdjitLaunchUnproven = -1,
  /* AdjitRecordAddLog of a launch that runs its threads one after another
     on one thread: kernels add directly, with no atomics and no call. */
  AdjitDirectAdds = 1,
  /* AdjitRecordSite of a GPU launch one of whose threads could not get
     device heap memory for a runtime loop's checkpoints (adjit-gpu-loop-
     buffers): AdjitRecordIndex holds the bytes it asked for; the thread
     stopped there. */
  AdjitHeapExhausted = -2
};

#endif /* ADJIT_RUNTIME_ERRORRECORD_H */
