"""What torch 2.13.0's Dynamo does when compiled code calls a method of an optimizer, a
learning-rate scheduler or a standard-library lock, queue or event, measured by bench/torch_methods.py
under real Dynamo: do not edit by hand.
Class -> method -> the gb_type of the graph break at the call ("" where it is traced)."""

TORCH_VERSION = '2.13.0'

METHOD_BREAKS = {
    'queue.LifoQueue': {
        'empty': 'Unsupported context manager',
        'full': 'Unsupported context manager',
        'get': 'Unsupported context manager',
        'get_nowait': 'Unsupported context manager',
        'put': 'Unsupported context manager',
        'put_nowait': 'Unsupported context manager',
        'qsize': 'Unsupported context manager',
        'task_done': 'Unsupported context manager',
    },
    'queue.PriorityQueue': {
        'empty': 'Unsupported context manager',
        'full': 'Unsupported context manager',
        'get': 'Unsupported context manager',
        'get_nowait': 'Unsupported context manager',
        'put': 'Unsupported context manager',
        'put_nowait': 'Unsupported context manager',
        'qsize': 'Unsupported context manager',
        'task_done': 'Unsupported context manager',
    },
    'queue.Queue': {
        'empty': 'Unsupported context manager',
        'full': 'Unsupported context manager',
        'get': 'Unsupported context manager',
        'get_nowait': 'Unsupported context manager',
        'put': 'Unsupported context manager',
        'put_nowait': 'Unsupported context manager',
        'qsize': 'Unsupported context manager',
        'task_done': 'Unsupported context manager',
    },
    'queue.SimpleQueue': {
        'empty': 'Unsupported method call',
        'get': 'Unsupported method call',
        'get_nowait': 'Unsupported method call',
        'put': 'Unsupported method call',
        'put_nowait': 'Unsupported method call',
        'qsize': 'Unsupported method call',
    },
    'threading.BoundedSemaphore': {
        'acquire': 'Unsupported context manager',
        'release': 'Unsupported context manager',
    },
    'threading.Condition': {
        'acquire': 'Unsupported method call',
        'release': 'Unsupported method call',
    },
    'threading.Event': {
        'clear': 'Unsupported context manager',
        'is_set': '',
        'set': 'Unsupported context manager',
        'wait': 'Unsupported context manager',
    },
    'threading.Lock': {
        'acquire': 'Unsupported method call',
        'locked': 'Unsupported method call',
        'release': 'Unsupported method call',
    },
    'threading.RLock': {
        'acquire': 'Unsupported method call',
        'release': 'Unsupported method call',
    },
    'threading.Semaphore': {
        'acquire': 'Unsupported context manager',
        'release': 'Unsupported context manager',
    },
    'torch.optim.ASGD': {
        'add_param_group': 'Attempted to inline function marked as skipped',
        'load_state_dict': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Call to `torch._dynamo.graph_break()`',
        'zero_grad': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.Adadelta': {
        'add_param_group': 'Attempted to inline function marked as skipped',
        'load_state_dict': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Call to `torch._dynamo.graph_break()`',
        'zero_grad': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.Adafactor': {
        'add_param_group': 'Attempted to inline function marked as skipped',
        'load_state_dict': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Unsupported Tensor.item() call with capture_scalar_outputs=False',
        'zero_grad': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.Adagrad': {
        'add_param_group': 'Attempted to inline function marked as skipped',
        'load_state_dict': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Call to `torch._dynamo.graph_break()`',
        'zero_grad': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.Adam': {
        'add_param_group': 'Attempted to inline function marked as skipped',
        'load_state_dict': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Call to `torch._dynamo.graph_break()`',
        'zero_grad': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.AdamW': {
        'add_param_group': 'Attempted to inline function marked as skipped',
        'load_state_dict': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Call to `torch._dynamo.graph_break()`',
        'zero_grad': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.Adamax': {
        'add_param_group': 'Attempted to inline function marked as skipped',
        'load_state_dict': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Call to `torch._dynamo.graph_break()`',
        'zero_grad': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.NAdam': {
        'add_param_group': 'Attempted to inline function marked as skipped',
        'load_state_dict': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Call to `torch._dynamo.graph_break()`',
        'zero_grad': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.Optimizer': {
        'add_param_group': 'Attempted to inline function marked as skipped',
        'load_state_dict': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'zero_grad': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.RAdam': {
        'add_param_group': 'Attempted to inline function marked as skipped',
        'load_state_dict': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Call to `torch._dynamo.graph_break()`',
        'zero_grad': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.RMSprop': {
        'add_param_group': 'Attempted to inline function marked as skipped',
        'load_state_dict': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Call to `torch._dynamo.graph_break()`',
        'zero_grad': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.Rprop': {
        'add_param_group': 'Attempted to inline function marked as skipped',
        'load_state_dict': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Call to `torch._dynamo.graph_break()`',
        'zero_grad': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.SGD': {
        'add_param_group': 'Attempted to inline function marked as skipped',
        'load_state_dict': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Call to `torch._dynamo.graph_break()`',
        'zero_grad': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.lr_scheduler.ConstantLR': {
        'get_last_lr': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.lr_scheduler.CosineAnnealingLR': {
        'get_last_lr': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.lr_scheduler.CosineAnnealingWarmRestarts': {
        'get_last_lr': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.lr_scheduler.CyclicLR': {
        'get_last_lr': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.lr_scheduler.ExponentialLR': {
        'get_last_lr': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.lr_scheduler.LRScheduler': {
        'get_last_lr': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.lr_scheduler.LambdaLR': {
        'get_last_lr': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.lr_scheduler.LinearLR': {
        'get_last_lr': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.lr_scheduler.MultiStepLR': {
        'get_last_lr': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.lr_scheduler.MultiplicativeLR': {
        'get_last_lr': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.lr_scheduler.OneCycleLR': {
        'get_last_lr': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.lr_scheduler.PolynomialLR': {
        'get_last_lr': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.lr_scheduler.ReduceLROnPlateau': {
        'get_last_lr': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Attempted to inline function marked as skipped',
    },
    'torch.optim.lr_scheduler.StepLR': {
        'get_last_lr': 'Attempted to inline function marked as skipped',
        'state_dict': 'Attempted to inline function marked as skipped',
        'step': 'Attempted to inline function marked as skipped',
    },
}
