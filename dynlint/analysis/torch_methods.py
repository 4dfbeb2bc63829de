"""What torch 2.13.0's Dynamo does when compiled code calls a method of an optimizer or a
learning-rate scheduler, measured by bench/torch_methods.py under real Dynamo: do not edit by hand.
Class -> method -> the gb_type of the graph break at the call ("" where it is traced)."""

TORCH_VERSION = '2.13.0'

METHOD_BREAKS = {
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
