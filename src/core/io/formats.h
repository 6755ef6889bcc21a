// formats.h: how attnviz writes numbers and tensors, in one include for the command line
// and the window, which both write them (so a tensor saved from either is the same file).
//
//   python_text.h   numbers and shapes as Python prints them
//   json_writer.h   JSON and CSV numbers, the streaming JSON writer
//   tensor_table.h  the trace's tensors: names, reference keys, shapes, blocks
//   tensor_files.h  .npy and .csv files
//   trace_json.h    the trace command's JSON
#pragma once
#include "json_writer.h"
#include "python_text.h"
#include "tensor_files.h"
#include "tensor_table.h"
#include "text_util.h"
#include "trace_json.h"
