# sampling settings shared by the flow and the sampling script
SAMPLE_TEMPERATURE = 1.0
SCALE_CLAMP = 3.0
